"""The writer's json encoder and the msgspec schema agree on every record kind."""

import msgspec

from agent_memory.outbox import encoding, records


def test_writer_records_decode_with_the_schema_and_round_trip():
    message = encoding.message(
        session_id="s", message_id="3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", text="héllo\n",
        sender_kind="human", sender_identity="a", receiver_kind="model", receiver_identity="b",
        occurred_at="2026-10-01T13:57:45.123000Z", sequence_number=3,
        written_at="2026-10-01T13:57:45.200000Z", priority=1,
        relations=[{"to_message_id": "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6a", "kind": "reply"}],
        attributes={"x": [1, None]})
    event = encoding.event(event="open", event_id="3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6b",
                           session_id="s", occurred_at="2026-10-01T13:57:45.123000Z",
                           project_id="p", dialogue_kind=["human", "model"], participants=["a"])
    vector = encoding.vector(message_id="3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", model="m",
                             dimension=2, embedding=[0.6, 0.8])
    for record, kind in ((message, records.MessageRecord), (event, records.SessionEvent),
                         (vector, records.VectorRecord)):
        data = encoding.encode(record)
        decoded = records.decode(data, kind)
        assert records.as_dict(decoded) == record
        assert msgspec.json.encode(decoded) + b"\n" == data  # same bytes, same field order


def test_unknown_format_version_is_refused():
    data = encoding.encode(encoding.vector(message_id="m", model="m", dimension=1, embedding=[1.0]))
    bumped = data.replace(b'"format_version":1', b'"format_version":99')
    try:
        records.decode(bumped, records.VectorRecord)
    except records.RecordError as exc:
        assert "format_version" in str(exc)
    else:
        raise AssertionError("a record of an unknown format version was accepted")
