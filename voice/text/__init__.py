"""Chinese text as the judges hear it: phrases matched tolerant of what ASR does to Mandarin.

``script`` turns traditional script into simplified; ``numbers`` reads numerals, codes and sums of money as
a speaker says them; ``forms`` the other word orders the grammar allows; ``matching`` finds a phrase in heard
text (by sound, negated, asked, corrected); ``synonyms`` the one reviewed table of actions said another way.
A room of its own, below both the dialogue schema (a reference must satisfy its annotations) and the
metrics (the checklist judge), so the two read a phrase the same way and neither imports the other.
"""
