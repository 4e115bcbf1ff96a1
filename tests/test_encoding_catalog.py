"""The torch-free encoding catalog says what the registry says, and parsing the workflow imports no torch."""

import os
import subprocess
import textwrap

import pytest

from conftest import snakemake_command
from lengthgen.models import encodings_table as encoding_catalog
from lengthgen.models import encodings

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


def test_the_catalog_reads_every_registered_encoding():
    assert list(encoding_catalog.encoding_catalog()) == list(encodings.ENCODINGS)


@pytest.mark.parametrize("name", NAMES)
def test_description_and_resolution_are_the_registry_s(name):
    cls, parameters = encodings.resolve_encoding(name)
    assert encoding_catalog.resolve_encoding_name(name) == (name.partition("@")[0], parameters)
    assert encoding_catalog.encoding_description(name) == encodings.encoding_description(name)
    assert encoding_catalog.encoding_catalog()[name.partition("@")[0]].parameters == tuple(
        encodings.encoding_parameters(cls))


def test_module_constant_is_the_registry_s():
    assert encoding_catalog.DEFAULT_NOISE_MAX_LENGTH == encodings.DEFAULT_NOISE_MAX_LENGTH


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
