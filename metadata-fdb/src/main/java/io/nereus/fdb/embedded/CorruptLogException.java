package io.nereus.fdb.embedded;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The durable log or one of its snapshots is damaged in a way that is not a torn final write, so opening it could
 * lose acknowledged commits. The message names the file and the byte offset where the damage was found.
 */
public final class CorruptLogException extends IOException {
    private final transient Path file;
    private final long offset;

    CorruptLogException(Path file, long offset, String detail) {
        super(file + " at byte offset " + offset + ": " + detail);
        this.file = file;
        this.offset = offset;
    }

    /** The damaged file. */
    public Path file() {
        return file;
    }

    /** The byte offset in {@link #file()} where the damage was found. */
    public long offset() {
        return offset;
    }
}
