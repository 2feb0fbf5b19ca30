"""The Apache Beam pipeline around rouge_core, and the `rouge-pipeline` command."""
