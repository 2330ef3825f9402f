"""`python -m grad_magic [--fast] [--json DIR] [--lang zh] [--write] script.py args...` (script.py)."""
from grad_magic.script import main

if __name__ == "__main__":  # NB: importing the module (a walk of the package, pydoc) runs nothing
    main()
