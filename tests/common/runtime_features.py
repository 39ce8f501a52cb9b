"""Whether the library has a runtime feature on this CPU (INT8_EXACT, CPU_AVX512, ...), asked of
`hybridnet features`, the library's one table of them, instead of a rule of the test's own over
/proc/cpuinfo."""
import subprocess


def enabled(cli, name):
    """True or False as `hybridnet features --require NAME` exits 0 or 77; an error otherwise."""
    done = subprocess.run([cli, "features", "--require", name], capture_output=True, text=True)
    if done.returncode not in (0, 77):
        raise RuntimeError(f"{cli} features --require {name} exited {done.returncode}: "
                           f"{done.stdout}{done.stderr}")
    return done.returncode == 0
