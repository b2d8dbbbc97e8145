// Tests for this target are being written.
