"""Logic files, the master solution library, selection, and create-library."""

from tensile_asm.library.create import CreateReport, create_library
from tensile_asm.library.logic import LogicFile, find_logic_files, read_logic_file, write_logic_file
from tensile_asm.library.master import build_master_library, write_master_library
from tensile_asm.library.select import Library

__all__ = ["Library", "LogicFile", "read_logic_file", "find_logic_files", "write_logic_file",
           "build_master_library", "write_master_library", "create_library", "CreateReport"]
