"""The HIP source writer (``KernelLanguage: Source``): solutions rendered from ``templates/`` into HIP C++
(``writer``), compiled by clang into code-object parts (``build``)."""
