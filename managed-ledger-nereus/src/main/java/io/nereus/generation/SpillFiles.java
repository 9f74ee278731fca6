package io.nereus.generation;

import io.nereus.object.ProcessFiles;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The local files compactions spill their objects into ({@value #PREFIX}) and the materializer the payloads of a
 * slice's streams ({@value #MATERIALIZER_PREFIX}): {@code <prefix><pid>-<random>}{@value #SUFFIX} in one directory,
 * named by the process that writes them ({@link ProcessFiles}), so that a process starting deletes the files of
 * processes that died. Stateless.
 */
final class SpillFiles {
    static final String PREFIX = "nereus-compaction-";
    static final String MATERIALIZER_PREFIX = "nereus-materializer-";
    static final String SUFFIX = ".object";

    private SpillFiles() {
    }

    /** A new, empty compaction spill file of this process in {@code dir}. */
    static Path create(Path dir) throws IOException {
        return create(dir, PREFIX);
    }

    /** A new, empty spill file of this process in {@code dir}, named with {@code prefix}. */
    static Path create(Path dir, String prefix) throws IOException {
        return ProcessFiles.create(dir, prefix, SUFFIX);
    }

    /**
     * Deletes the compaction spill files in {@code dir} whose process is no longer running on this host (see
     * {@link ProcessFiles#removeAbandoned}); nothing published depends on a spill file. Returns the files deleted.
     */
    static int removeAbandoned(Path dir) {
        return removeAbandoned(dir, PREFIX);
    }

    /** As {@link #removeAbandoned(Path)}, for the spill files named with {@code prefix}. */
    static int removeAbandoned(Path dir, String prefix) {
        return ProcessFiles.removeAbandoned(dir, prefix, SUFFIX);
    }
}
