"""The reference AI Logger: ailogger-client 0.1.30's commands over a SQLite file."""
