"""Builds the optional compiled kernel (rouge_core/_kernel.c) next to pyproject.toml.

Everything else is declared in pyproject.toml.  The extension is optional: without
a C compiler `pip install` still succeeds and rouge_core scores in pure Python
(rouge_core.kernel_info() says which path is active).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "rouge_core._kernel",
            sources=["rouge_core/_kernel.c", "rouge_core/_rouge_score_kernel.c", "rouge_core/_nltk_porter.c"],
            extra_compile_args=["-O2", "-std=c11"],
            optional=True,
        )
    ]
)
