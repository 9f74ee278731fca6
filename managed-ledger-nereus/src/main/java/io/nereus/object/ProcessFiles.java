package io.nereus.object;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Local working files named by the process that writes them, {@code <prefix><pid>-<random><suffix>} in one
 * directory, so that a process starting can tell the files of processes that died (a crash, a kill: nothing deleted
 * them) from those of processes still running, and delete them: the compactions' and the materializer's spill files,
 * the WAL slice mirrors. Stateless.
 */
public final class ProcessFiles {
    private static final Logger LOG = LoggerFactory.getLogger(ProcessFiles.class);

    private ProcessFiles() {
    }

    /** The JVM's temporary directory ({@code java.io.tmpdir}), where the broker keeps these files. */
    public static Path tempDir() {
        return Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** A new, empty file of this process in {@code dir}, named with {@code prefix} and {@code suffix}. */
    public static Path create(Path dir, String prefix, String suffix) throws IOException {
        return Files.createTempFile(dir, prefix + ProcessHandle.current().pid() + "-", suffix);
    }

    /**
     * Deletes the files in {@code dir} named with {@code prefix} and {@code suffix} whose process is no longer
     * running on this host. A file of a running process (this one, another broker) stays, and so does a name without
     * a process id. Processes in another PID namespace sharing the directory (containers with one temporary directory
     * mounted) look dead from here: whatever used the file fails and is retried by its broker; nothing published
     * depends on such a file. Failures are logged, never thrown. Returns the files deleted.
     */
    public static int removeAbandoned(Path dir, String prefix, String suffix) {
        int removed = 0;
        long bytes = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, prefix + "*" + suffix)) {
            for (Path f : files) {
                OptionalLong pid = pid(f.getFileName().toString(), prefix, suffix);
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
            LOG.warn("abandoned local files not removed: dir={} prefix={}", dir, prefix, e);
        }
        if (removed > 0) {
            LOG.info("removed local files left by processes no longer running: dir={} prefix={} files={} bytes={}",
                    dir, prefix, removed, bytes);
        }
        return removed;
    }

    /** The process id in the name of a file named with {@code prefix} and {@code suffix}, empty when it has none. */
    public static OptionalLong pid(String fileName, String prefix, String suffix) {
        if (!fileName.startsWith(prefix) || !fileName.endsWith(suffix)) {
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
