from setuptools import find_packages, setup

setup(
    name="pyprof_live",
    version="0.1.0",
    description="Which kernels each line, module and op of a PyTorch model launched, with flops, bytes and roofline.",
    packages=find_packages(include=["pyprof_live", "pyprof_live.*"]),
    python_requires=">=3.10",
    install_requires=["torch", "tabulate", "nvtx"],
    extras_require={
        "gpu": ["cupti-python"],
        "test": ["pytest", "hypothesis", "cupti-python", "pandas"],  # pandas: p.to_dataframe() tests
    },
    entry_points={"console_scripts": ["pyprof-live=pyprof_live.cli:main"]},
)
