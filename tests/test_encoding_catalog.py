"""The torch-free table of encodings: what the family modules declare, read as the model reads it; a declaration
it cannot read, or a class that contradicts it, stops the run naming both; parsing the workflow imports no torch."""

import os
import subprocess
import textwrap
from dataclasses import replace

import pytest

from conftest import snakemake_command
from lengthgen.models import encodings_table as encoding_catalog
from lengthgen.models import encodings
from lengthgen.models.encodings import randomized
from lengthgen.models.encodings.base import check_class
from lengthgen.models.encodings.rope import Rotary

# Every registered encoding, and one name with parameters per encoding that takes them.
NAMES = sorted(encodings.ENCODINGS) + ["rope@base=100", "alibi@slope=0.5", "fire@threshold=8",
                                       "fire_fixed@threshold=64", "randomized_rope@noise_max_length=2000"]

# Loaded by every Python process started with its folder on PYTHONPATH: records the stack of any
# import of torch in a marker file (the import then goes on, so the run behaves as without it).
# It pops its variable so that the processes Snakemake starts are not watched, only the parse;
# the ".armed" file shows the watch ran at all, so the test cannot pass by never looking.
TORCH_WATCH = textwrap.dedent('''
    import os, sys, traceback

    MARKER = os.environ.pop("LENGTHGEN_TORCH_MARKER", None)


    class TorchImportWatch:
        def find_spec(self, name, path=None, target=None):
            if name == "torch":  # its submodules come after it: the first import says who
                with open(MARKER, "a") as marker:
                    marker.write("".join(traceback.format_stack()))
            return None  # let the ordinary finders import it


    if MARKER:
        open(MARKER + ".armed", "w").close()
        sys.meta_path.insert(0, TorchImportWatch())
''')


def test_the_table_holds_every_family_module_s_encodings_and_each_class_matches_its_declaration():
    assert sorted(encodings.ENCODINGS) == list(encoding_catalog.encoding_catalog())
    for name, entry in encoding_catalog.encoding_catalog().items():
        cls = encodings.ENCODINGS[name]  # imported from its module and checked against the declaration
        assert (cls.__module__, cls.__name__) == (entry.module, entry.class_name)
        assert encoding_catalog.encoding_module(name) == cls.__module__


@pytest.mark.parametrize("name", NAMES)
def test_resolution_is_the_registry_s(name):
    cls, parameters = encodings.resolve_encoding(name)
    assert encoding_catalog.resolve_encoding_name(name) == (name.partition("@")[0], parameters)
    assert encoding_catalog.encoding_catalog()[name.partition("@")[0]].parameters == tuple(
        encodings.encoding_parameters(cls))


def test_module_constant_is_the_randomized_encodings_own():
    assert encoding_catalog.DEFAULT_NOISE_MAX_LENGTH == randomized.DEFAULT_NOISE_MAX_LENGTH


@pytest.mark.parametrize("name", [
    "Rope", "rope@base",  # malformed
    "rotary",  # unknown encoding
    "rope@bse=100", "learned@base=100",  # unknown parameter (with and without parameters to list)
    "rope@base=1e",  # not a number
])
def test_bad_names_give_the_registry_s_error(name):
    with pytest.raises(ValueError) as expected:
        encodings.resolve_encoding(name)
    with pytest.raises(ValueError) as error:
        encoding_catalog.resolve_encoding_name(name)
    assert str(error.value) == str(expected.value)


# A family module as docs/adding-an-encoding.md shows it, with one declaration line left to the test.
FAMILY_MODULE = """
import torch

DECLARATIONS = {{
    "xpos_lite": {{
        "class": "XPosLite",
        "offset_only": True,
        "trained_past_range": True,
        {line}
    }},
}}


class XPosLite:
    \"\"\"RoPE with a fixed logit bias -0.05 (i - j).\"\"\"
"""


def family_folder(tmp_path, line):
    (tmp_path / "xpos_lite.py").write_text(FAMILY_MODULE.format(line=line))
    return tmp_path


def test_a_declared_module_reads_as_a_table_entry_with_its_class_s_first_paragraph(tmp_path):
    entry = encoding_catalog.read_catalog(family_folder(tmp_path, '"monotone_in_offset": False,'))["xpos_lite"]
    assert (entry.class_name, entry.offset_only, entry.monotone_in_offset, entry.random_positions) == (
        "XPosLite", True, False, False)
    assert entry.summary == "RoPE with a fixed logit bias -0.05 (i - j)."


@pytest.mark.parametrize("line, message", [
    ('"monotone_in_offset": not False,', r"encoding 'xpos_lite': monotone_in_offset is written 'not False', an "
                                         r"expression; write it as a literal bool"),
    ('"monotone_in_offset": 0,', r"encoding 'xpos_lite': monotone_in_offset must be a bool, got 0"),
    ('"monotone": False,', r"encoding 'xpos_lite': unknown key 'monotone'"),
    ("", r"encoding 'xpos_lite' does not declare monotone_in_offset$"),
    ('"monotone_in_offset": False, "parameters": ("scale", 1),', r"parameters must be a tuple of parameter names"),
    # offset only at every length already, and bounded by a parameter it does not have
    ('"monotone_in_offset": False, "offset_only_up_to": "scale",', r"offset_only_up_to must name one of its "
                                                                   r"parameters \(none declared\), and offset_only"),
])
def test_a_declaration_the_table_cannot_read_stops_it_naming_the_encoding_and_the_property(tmp_path, line, message):
    with pytest.raises(encoding_catalog.DeclarationError, match=message):
        encoding_catalog.read_catalog(family_folder(tmp_path, line))


def test_a_name_declared_in_two_modules_or_a_class_the_module_lacks_is_refused(tmp_path):
    folder = family_folder(tmp_path, '"monotone_in_offset": False,')
    (folder / "copy.py").write_text((folder / "xpos_lite.py").read_text())
    with pytest.raises(encoding_catalog.DeclarationError, match="'xpos_lite' is declared twice"):
        encoding_catalog.read_catalog(folder)
    (folder / "copy.py").write_text((folder / "xpos_lite.py").read_text().replace("class XPosLite", "class Other"))
    with pytest.raises(encoding_catalog.DeclarationError, match="class 'XPosLite' is not defined in this module"):
        encoding_catalog.read_catalog(folder)


@pytest.mark.parametrize("change, message", [
    ({}, r"the class sets monotone_in_offset; declare it in DECLARATIONS only"),  # the class states a property
    ({"random_positions": True}, r"declares random_positions = True, the class has False"),
    ({"position_term": False}, r"declares position_term = False, the class has True"),
    ({"parameters": ()}, r"declares parameters = \(\), the class has \('base',\)"),
])
def test_a_class_that_contradicts_its_declaration_is_refused_naming_the_encoding_and_the_property(change, message):
    entry = replace(encoding_catalog.encoding_catalog()["rope"], **change)
    cls = Rotary if change else type("StatingRotary", (Rotary,), {"monotone_in_offset": False})
    with pytest.raises(TypeError, match=r"^positional encoding 'rope' \(class \w+, lengthgen.models.encodings.rope\): "
                                        + message):
        check_class("rope", cls, entry)


def test_parsing_the_workflow_imports_no_torch(tmp_path):
    watch = tmp_path / "watch"
    watch.mkdir()
    (watch / "sitecustomize.py").write_text(TORCH_WATCH)
    marker = tmp_path / "torch_imported"
    environment = {**os.environ, "LENGTHGEN_TORCH_MARKER": str(marker),
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(watch), os.environ.get("PYTHONPATH")]))}
    workdir = tmp_path / "run"
    result = subprocess.run(snakemake_command(workdir, "-n"), env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert marker.with_name(marker.name + ".armed").exists(), "the torch watch did not run"
    assert not marker.exists(), "parsing the workflow imported torch:\n" + marker.read_text()
