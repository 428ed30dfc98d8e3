"""The Python programs of doc/payments.md and doc/clients.md, run as the
docs show them: each block marked <!-- python example NAME --> runs in a
fresh database with caio, set up by the SQL block marked
<!-- python setup NAME --> if there is one, and prints exactly the block
marked <!-- python output NAME --> (whose first line is the command)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest
from typing import Dict, Tuple

import psycopg

from support import fresh_database

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.environ.get("CAIO_DOCS") or os.path.join(HERE, "..", "..", "..", "doc")
MARK = re.compile(r"^<!-- python (setup|example|output) (\S+) -->\s*$")


def marked_blocks(path: str) -> Dict[Tuple[str, str], str]:
    blocks: Dict[Tuple[str, str], str] = {}
    key = None
    text = None
    with open(path, encoding="utf-8") as doc:
        for line in doc:
            if text is not None:
                if line.rstrip() == "```":
                    assert key is not None
                    blocks[key] = "".join(text)
                    key, text = None, None
                else:
                    text.append(line)
            elif key is not None and line.startswith("```"):
                text = []
            else:
                mark = MARK.match(line)
                if mark:
                    key = (mark.group(1), mark.group(2))
    return blocks


class DocExamples(unittest.TestCase):
    def test_examples(self) -> None:
        blocks: Dict[Tuple[str, str], str] = {}
        for doc in ("payments.md", "clients.md"):
            blocks.update(marked_blocks(os.path.join(DOCS, doc)))
        names = sorted(name for kind, name in blocks if kind == "example")
        self.assertEqual(names, ["claims_worker.py", "hot_wallet.py", "story.py"])
        for name in names:
            with self.subTest(name):
                database = "caio_python_doc_" + name.split(".")[0]
                fresh_database(database)
                if ("setup", name) in blocks:
                    with psycopg.connect(dbname=database, autocommit=True) as conn:
                        conn.execute(blocks[("setup", name)])
                command, _, expected = blocks[("output", name)].partition("\n")
                words = shlex.split(command.lstrip("$ "))
                self.assertEqual(words[:2], ["python3", name])
                with tempfile.TemporaryDirectory() as work:
                    with open(os.path.join(work, name), "w", encoding="utf-8") as program:
                        program.write(blocks[("example", name)])
                    run = subprocess.run([sys.executable, name, *words[2:]], cwd=work, capture_output=True,
                                         text=True, timeout=60,
                                         env=dict(os.environ, PGDATABASE=database, PYTHONDONTWRITEBYTECODE="1"))
                self.assertEqual(run.returncode, 0, run.stderr)
                self.assertEqual(run.stdout, expected)


if __name__ == "__main__":
    unittest.main()
