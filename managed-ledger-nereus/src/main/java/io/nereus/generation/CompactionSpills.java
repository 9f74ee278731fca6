package io.nereus.generation;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local files compactions spill their objects into: {@value #PREFIX}{@code <pid>-<random>}{@value #SUFFIX} in one
 * directory, named by the process that writes them, so that a process starting can tell the files of processes that
 * died (a crash, a kill: nothing deleted them) from those of processes still running, and delete them. Stateless.
 */
final class CompactionSpills {
    private static final Logger LOG = LoggerFactory.getLogger(CompactionSpills.class);
    static final String PREFIX = "nereus-compaction-";
    static final String SUFFIX = ".object";

    private CompactionSpills() {
    }

    /** A new, empty spill file of this process in {@code dir}. */
    static Path create(Path dir) throws IOException {
        return Files.createTempFile(dir, PREFIX + ProcessHandle.current().pid() + "-", SUFFIX);
    }

    /**
     * Deletes the spill files in {@code dir} whose process is no longer running on this host. A file of a running
     * process (this one, another broker) stays, and so does a name without a process id. Processes in another PID
     * namespace sharing the directory (containers with one temporary directory mounted) look dead from here: a
     * compaction of theirs whose file is deleted fails and is retried by its broker; nothing published depends on a
     * spill file. Failures are logged, never thrown. Returns the files deleted.
     */
    static int removeAbandoned(Path dir) {
        int removed = 0;
        long bytes = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, PREFIX + "*" + SUFFIX)) {
            for (Path f : files) {
                OptionalLong pid = pid(f.getFileName().toString());
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
            LOG.warn("abandoned compaction spill files not removed: dir={}", dir, e);
        }
        if (removed > 0) {
            LOG.info("removed compaction spill files left by processes no longer running: dir={} files={} bytes={}",
                    dir, removed, bytes);
        }
        return removed;
    }

    /** The process id in a spill file's name, empty when the name has none. */
    static OptionalLong pid(String fileName) {
        if (!fileName.startsWith(PREFIX) || !fileName.endsWith(SUFFIX)) {
            return OptionalLong.empty();
        }
        int dash = fileName.indexOf('-', PREFIX.length());
        if (dash <= PREFIX.length()) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(fileName.substring(PREFIX.length(), dash)));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }
}
