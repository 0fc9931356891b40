"""medlink: link medical mentions to concepts in medical terminologies."""

__version__ = "0.1.0"
