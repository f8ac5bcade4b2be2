"""The one exception type a user can cause; its message is a single actionable sentence."""


class InspectorError(Exception):
    """Bad input or an unusable store: shown as one sentence, never as a traceback."""
