package io.nereus.generation;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local files compactions spill their objects into ({@value #PREFIX}) and the materializer the payloads of a
 * slice's streams ({@value #MATERIALIZER_PREFIX}): {@code <prefix><pid>-<random>}{@value #SUFFIX} in one directory,
 * named by the process that writes them, so that a process starting can tell the files of processes that died (a
 * crash, a kill: nothing deleted them) from those of processes still running, and delete them. Stateless.
 */
final class SpillFiles {
    private static final Logger LOG = LoggerFactory.getLogger(SpillFiles.class);
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
        return Files.createTempFile(dir, prefix + ProcessHandle.current().pid() + "-", SUFFIX);
    }

    /**
     * Deletes the compaction spill files in {@code dir} whose process is no longer running on this host. A file of a running
     * process (this one, another broker) stays, and so does a name without a process id. Processes in another PID
     * namespace sharing the directory (containers with one temporary directory mounted) look dead from here: a
     * compaction of theirs whose file is deleted fails and is retried by its broker; nothing published depends on a
     * spill file. Failures are logged, never thrown. Returns the files deleted.
     */
    static int removeAbandoned(Path dir) {
        return removeAbandoned(dir, PREFIX);
    }

    /** As {@link #removeAbandoned(Path)}, for the spill files named with {@code prefix}. */
    static int removeAbandoned(Path dir, String prefix) {
        int removed = 0;
        long bytes = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, prefix + "*" + SUFFIX)) {
            for (Path f : files) {
                OptionalLong pid = pid(f.getFileName().toString(), prefix);
                if (pid.isEmpty() || pid.getAsLong() == ProcessHandle.current().pid()
                        || ProcessHandle.of(pid.getAsLong()).map(ProcessHandle::isAlive).orElse(false)) {
                    continue;
                }
                long size = Files.size(f);
                if (Files.deleteIfExists(f)) {
                    removed++;
                    bytes += size;
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("abandoned spill files not removed: dir={} prefix={}", dir, prefix, e);
        }
        if (removed > 0) {
            LOG.info("removed spill files left by processes no longer running: dir={} prefix={} files={} bytes={}",
                    dir, prefix, removed, bytes);
        }
        return removed;
    }

    /** The process id in a compaction spill file's name, empty when the name has none. */
    static OptionalLong pid(String fileName) {
        return pid(fileName, PREFIX);
    }

    /** The process id in the name of a spill file named with {@code prefix}, empty when the name has none. */
    static OptionalLong pid(String fileName, String prefix) {
        if (!fileName.startsWith(prefix) || !fileName.endsWith(SUFFIX)) {
            return OptionalLong.empty();
        }
        int dash = fileName.indexOf('-', prefix.length());
        if (dash <= prefix.length()) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(fileName.substring(prefix.length(), dash)));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }
}
