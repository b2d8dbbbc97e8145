"""The data folder is the server user's alone (docs/operations.md, "Files"): the real binary, real files."""
import os
import stat
import subprocess

from conftest import BIN, ROOT, Server


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_data_folder_others_may_write_is_refused_with_the_chmod_that_fixes_it(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o777)
    result = subprocess.run([BIN, "serve", "--port", "0", "--data", str(data)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert f"the data folder {data} can be changed by other users of this computer (mode 777)" in output, output
    assert f"chmod 700 {data}" in output, output
    # Nothing was written in it, not even the lock.
    assert list(data.iterdir()) == []


def test_a_readable_data_folder_is_made_private_and_everything_written_is_private(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o755)
    (data / "admin-token").write_text("a-teacher-s-old-token\n")
    os.chmod(data / "admin-token", 0o644)
    server = Server(data).start()
    try:
        server.create_room()
        assert "Data folder made private to this user" in "".join(server.output)
        for root, folders, files in os.walk(data):
            assert mode(root) == 0o700, root
            for name in files:
                assert mode(os.path.join(root, name)) == 0o600, (name, oct(mode(os.path.join(root, name))))
        assert {"storycircle.sqlite", "admin-token", "lock", "config.json"} <= set(os.listdir(data))
    finally:
        server.stop()
