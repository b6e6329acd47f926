"""The governed write path: elements, proposals, review, decisions and publishing."""
