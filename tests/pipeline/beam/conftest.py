from apache_beam.testing.test_pipeline import TestPipeline

TestPipeline.__test__ = False  # Beam's pipeline for tests, not a test class for pytest to collect
