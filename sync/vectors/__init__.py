"""Message vectors and the local search over them: the derived index of every `.emb`
(`index`), the backfill that fills missing vectors (`backfill`), and the offline reads that rank
by closeness as the logger does (`search`)."""
