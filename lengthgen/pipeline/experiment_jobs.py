"""What the workflow's jobs of one experiment read, write, are given and run, made from its declaration
(``lengthgen/experiments/declaration.py``): ``analyze_<name>`` (workflow/rules/analysis.smk) and ``plot_<name>``
(workflow/rules/figures.smk), one job each, or one per offset for an experiment that runs per offset.

``ExperimentJobs`` holds one config and its results folder; the workflow makes one at start-up (and one per
confirmation run and robustness point, each in its own module), so this module imports no torch.
"""

from pathlib import Path

from lengthgen.experiments import families
from lengthgen.experiments.declaration import (EvalSets, Evaluations, Experiment, Models, RangeFits, Source, Table,
                                               TrainingCurves, schema_of, schema_read, setting, settings_of)
from lengthgen.pipeline.sources import encoding_sources, fingerprints, lengthgen_files, schema_sources
from lengthgen.runtime.seeding import derive_seed

MODEL_FILES = {Models: "model.pt", RangeFits: "range_fit.parquet", TrainingCurves: "training_curve.parquet"}


def section_name(experiment: Experiment, offset) -> str:
    return f"{experiment.name}_K{offset}" if experiment.per_offset else experiment.name


def per_job(experiment: Experiment, make):
    """A rule's input or params function: ``make(offset)``, the offset of the job (its {offset} wildcard) for an
    experiment that runs per offset, else None."""
    return lambda wildcards: make(int(wildcards.offset) if experiment.per_offset else None)


class ExperimentJobs:
    def __init__(self, config: dict, results: str, repo: Path):
        self.config, self.results, self.repo = config, results, Path(repo)

    def source_files(self, source: Source, offset: int | None = None) -> list[str]:
        """The files of one declared input; ``offset``: that of a per-offset experiment's job."""
        if isinstance(source, Table):
            return [f"{self.results}/tables/{source.name}.parquet"]
        if isinstance(source, EvalSets):
            return [f"{self.results}/data/eval/offset~{each}.parquet" for each in self.offsets(source, offset)]
        pe = getattr(source, "pe", None)
        if isinstance(source, Evaluations):
            paths = families.evaluation_files(source.family, self.config, pe, offset)
        else:
            paths = families.model_files(source.family, self.config, MODEL_FILES[type(source)], pe, offset)
        return [f"{self.results}/{path}" for path in paths]

    def offsets(self, source: EvalSets, offset: int | None) -> list[int]:
        return [offset] if offset is not None else list(setting(self.config, source.offsets))

    def source_details(self, source: Source, offset: int | None = None) -> dict:
        """What a job needs besides the files to load one input: models' runs and settings, sets' offsets."""
        if isinstance(source, Models):
            return {"runs": families.runs(source.family, self.config, source.pe, offset),
                    "expected": families.expected_settings(source.family, self.config)}
        if isinstance(source, EvalSets):
            return {"offsets": self.offsets(source, offset)}
        return {}

    def code(self, experiment: Experiment, dispatcher: str) -> tuple[str, ...]:
        """The lengthgen files one experiment's job runs, as fingerprints (``sources.fingerprints``): the dispatcher
        script's imports, the experiment's own modules (its analysis, or its figures and section text) with theirs,
        and the schema module of every table it reads or writes (loaded by name at run time, so no import shows
        them)."""
        analyzes = dispatcher == "analyze.py"
        files = set(lengthgen_files(self.repo, self.repo / "workflow" / "scripts" / dispatcher))
        if analyzes:
            schemas = [schema_read(source) for source in experiment.reads.values() if schema_read(source)]
            schemas += [schema_of(table) for table in experiment.tables]
        else:
            schemas = [schema for _, schema in self.figure_tables(experiment).values()]
        files |= set(schema_sources(self.repo, schemas))
        for module in ["analysis"] if analyzes else ["figures", "section"]:
            source = self.repo / "lengthgen" / "experiments" / experiment.name / f"{module}.py"
            files |= {source, *lengthgen_files(self.repo, source)}
        files |= set(encoding_sources(self.repo, self.encodings(experiment)))
        return fingerprints(self.repo, files)

    def encodings(self, experiment: Experiment) -> set[str]:
        """The encodings one experiment's jobs may build or read the declarations of (each loaded by name, so no
        import shows it): those of the models, evaluations and range fits it reads, and those shift measures at
        their init (shift.pe_at_init)."""
        read = {run["pe"] for source in experiment.reads.values() if hasattr(source, "family")
                for run in families.runs(source.family, self.config, getattr(source, "pe", None))}
        return read | set(self.config["shift"]["pe_at_init"] if "shift" in experiment.settings else [])

    def settings(self, experiment: Experiment, offset: int | None = None) -> dict:
        """The config keys the experiment declares, nested as in the config, and its offset if it runs per offset."""
        return {**settings_of(experiment, self.config), **({"offset": offset} if offset is not None else {})}

    def bootstrap(self, section: str) -> dict:
        """The seed bootstrap of one section's checks (lengthgen/checks/bootstrap.py): how many resamples, and the
        seed of its draws, derived from bootstrap.seed and the section so that sections draw apart."""
        return {"resamples": self.config["bootstrap"]["resamples"],
                "seed": derive_seed("bootstrap", self.config["bootstrap"]["seed"], section)}

    def tables(self, experiment: Experiment, offset: int | None = None) -> dict[str, str]:
        """Its tables' paths by schema name (per-offset tables for one offset, or left as a wildcard)."""
        return {schema_of(table): f"{self.results}/tables/{table.format(offset=offset) if offset is not None else table}"
                                  ".parquet" for table in experiment.tables}

    def figure_tables(self, experiment: Experiment, offset: int | None = None) -> dict[str, tuple[str, str]]:
        """The tables a figure job reads, by name, with their schema names: the experiment's own tables and the
        tables it reads (its other inputs are models and evaluation sets, which figures do not draw)."""
        own = {name: (path, name) for name, path in self.tables(experiment, offset).items()}
        read = {name: (self.source_files(source, offset)[0], source.schema_name)
                for name, source in experiment.reads.items() if isinstance(source, Table)}
        return {**read, **own}

    def figures(self, experiment: Experiment, offset: int | None = None) -> list[str]:
        """Its figures' names: per offset of its section (shift) or of ``figures_per`` (prop1), or one each."""
        names = []
        for figure in experiment.figures:
            if experiment.per_offset:
                names.append(figure.format(offset=offset) if offset is not None else figure)
            elif experiment.figures_per:
                names += [figure.format(offset=each) for each in setting(self.config, experiment.figures_per)]
            else:
                names.append(figure)
        return names

    def caption(self, experiment: Experiment, figure: str) -> str | None:
        """A figure's caption in the HTML report: lengthgen/experiments/<name>/<figure>.rst, else its experiment's
        caption.rst, else none (a caption is optional; Snakemake fails the report on a caption file that does not
        exist). Relative to workflow/rules/, where the figure rule is."""
        folder = self.repo / "lengthgen" / "experiments" / experiment.name
        for name in (schema_of(figure), "caption"):
            if (folder / f"{name}.rst").exists():
                return f"../../lengthgen/experiments/{experiment.name}/{name}.rst"
        return None

    def log(self, rule: str, experiment: Experiment) -> str:
        """A job's log: logs/<rule>.log, or logs/<rule>/K{offset}.log per offset."""
        return f"{self.results}/logs/{rule}{'/K{offset}' if experiment.per_offset else ''}.log"

    def sections(self, experiment: Experiment) -> dict[str, int | None]:
        """Its sections, each with the offset of its job: one per offset for a per-offset experiment, else one."""
        offsets = setting(self.config, experiment.per_offset) if experiment.per_offset else [None]
        return {section_name(experiment, offset): offset for offset in offsets}
