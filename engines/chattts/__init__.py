"""ChatTTS engine."""
