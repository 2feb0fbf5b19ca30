"""Guarded use of Beam's internals (pipeline/beam/runners/patches.py): a missing
attribute is refused, an untested Beam version is warned about, and what a fix
replaces is Beam's own again when the run ends, however it ends."""

from __future__ import annotations

import logging
import types

import pytest
from apache_beam import version as beam_version
from apache_beam.runners.portability.fn_api_runner import fn_runner

from pipeline.beam.runners import dask_runner, fn_runner_fixes
from pipeline.beam.runners.patches import TESTED_BEAM, Internals
from rouge_core import RougeConfigError


class Owner:
    def method(self):
        return "theirs"


class Child(Owner):
    pass


def ours(self):
    return "ours"


def test_the_installed_beam_is_a_tested_one():
    assert beam_version.__version__ in TESTED_BEAM


def test_replaced_while_applied_and_the_originals_back_after():
    fix = Internals("TEST_FIX", replaces=lambda: [(Owner, "method", ours)])
    with fix.applied():
        assert Owner().method() == "ours"
        with fix.applied():  # nested (a second run in another thread): still one application
            assert Owner().method() == "ours"
        assert Owner().method() == "ours"
    assert Owner().method() == "theirs" and Owner.__dict__["method"] is not ours


def test_an_inherited_method_is_inherited_again_after():
    fix = Internals("TEST_FIX", replaces=lambda: [(Child, "method", ours)])
    with pytest.raises(RuntimeError):
        with fix.applied():
            assert Child().method() == "ours"
            raise RuntimeError("the run failed")
    assert "method" not in Child.__dict__ and Child().method() == "theirs"


def test_a_missing_attribute_is_refused_naming_it_and_nothing_is_replaced():
    fix = Internals("TEST_FIX", uses=lambda: [(Owner, "_gone")], replaces=lambda: [(Owner, "method", ours)])
    with pytest.raises(RougeConfigError, match=r"apache-beam [\d.]+ has no Owner\._gone, which rouge-pipeline's fix "
                                               r"TEST_FIX needs \(tested on apache-beam 2\.77\.0\): install"):
        with fix.applied():
            pass
    assert Owner().method() == "theirs"


def test_a_name_a_function_no_longer_reads_is_refused():
    def start(self):
        self.other = 1

    fix = Internals("TEST_FIX", uses=lambda: [(start.__code__, "_data_buffer_time_limit_ms")])
    with pytest.raises(RougeConfigError, match=r"has no .*start\(\)\._data_buffer_time_limit_ms"):
        fix.check()


def test_an_untested_beam_version_is_warned_about_once(monkeypatch, caplog):
    monkeypatch.setattr(beam_version, "__version__", "2.99.0")
    fix = Internals("TEST_FIX", replaces=lambda: [(Owner, "method", ours)])
    with caplog.at_level(logging.WARNING, logger="rouge-pipeline"):
        with fix.applied():
            assert Owner().method() == "ours"
        with fix.applied():
            pass
    warnings = [r.getMessage() for r in caplog.records if "2.99.0" in r.getMessage()]
    assert warnings == [
        "apache-beam 2.99.0 is not a version rouge-pipeline's fix TEST_FIX was tested on (2.77.0); it is applied, "
        "since every attribute it replaces exists, but the run's count check is what proves it"
    ]


def test_the_row_loss_fix_on_a_beam_without_its_method_is_refused(monkeypatch):
    """A renamed BundleManager method must not turn the fix into a silent no-op."""
    from apache_beam.options.pipeline_options import PipelineOptions

    monkeypatch.delattr(fn_runner.BundleManager, "_send_input_to_worker")
    options = PipelineOptions(["--runner=FnApiRunner", "--direct_running_mode=multi_processing"])
    with pytest.raises(RougeConfigError, match=r"has no BundleManager\._send_input_to_worker, which rouge-pipeline's "
                                               r"fix RUNNER_INPUT_WRITE_RACE"):
        with fn_runner_fixes.fixed(options):
            pass


def test_the_row_loss_fix_on_an_untested_beam_is_warned_about(monkeypatch, caplog):
    from apache_beam.options.pipeline_options import PipelineOptions

    monkeypatch.setattr(beam_version, "__version__", "3.0.0")
    monkeypatch.setattr(fn_runner_fixes.FIXES, "_warned", False)
    options = PipelineOptions(["--runner=FnApiRunner", "--direct_running_mode=multi_processing"])
    with caplog.at_level(logging.WARNING, logger="rouge-pipeline"):
        with fn_runner_fixes.fixed(options):
            assert fn_runner_fixes.applied()
    assert not fn_runner_fixes.applied()
    assert any("apache-beam 3.0.0 is not a version" in r.getMessage() for r in caplog.records)


def test_the_dask_runner_checks_the_internals_it_reads(monkeypatch):
    from apache_beam.runners.dask import transform_evaluator

    monkeypatch.delattr(transform_evaluator, "get_windowed_value")
    with pytest.raises(RougeConfigError, match=r"has no apache_beam\.runners\.dask\.transform_evaluator"
                                               r"\.get_windowed_value"):
        dask_runner.INTERNALS.check()


def test_every_internal_named_exists_in_this_beam():
    for fix in (fn_runner_fixes.FIXES, dask_runner.INTERNALS):
        fix.check()
    assert isinstance(fn_runner_fixes.FIXES.uses()[1][0], types.CodeType)
