"""Bounds on returned reviewer files, which are untrusted input.

A packet of a few hundred items is well under a megabyte; the limits leave room for long notes and
searches while keeping a hostile file (a zip bomb, a giant cell) from exhausting memory.
"""

MAX_FILE_BYTES = 50_000_000  # the file as returned (xlsx or csv)
MAX_PART_BYTES = 100_000_000  # one part of the xlsx archive, inflated (one sheet's XML)
MAX_INFLATED_BYTES = 200_000_000  # all parts of the xlsx archive, inflated
# One cell needs no limit of its own: openpyxl reads at most 32,767 characters per cell (Excel's
# limit), and the CSV reader stops at its field limit of 131,072 characters (reported as a problem).
