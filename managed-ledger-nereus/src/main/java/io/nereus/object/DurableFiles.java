package io.nereus.object;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/** The fsync steps that make creating files and directories survive a crash. */
final class DurableFiles {
    /**
     * Directories are created readable, writable and searchable by their owner only (on file systems with POSIX
     * permissions): they hold the data and metadata of every topic.
     */
    private static final FileAttribute<?>[] OWNER_ONLY =
            FileSystems.getDefault().supportedFileAttributeViews().contains("posix")
                    ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rwx------"))}
                    : new FileAttribute<?>[0];

    private DurableFiles() {
    }

    /**
     * Creates {@code dir} and any missing parents, fsyncing the parent of each directory it creates, so the new
     * directories are still there after a crash. Fails with {@link java.nio.file.FileAlreadyExistsException} when
     * {@code dir} or a parent exists but is not a directory.
     */
    static void createDirectories(Path dir) throws IOException {
        List<Path> missing = new ArrayList<>();
        for (Path p = dir.toAbsolutePath(); p != null && !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
                p = p.getParent()) {
            missing.add(p);
        }
        if (missing.isEmpty()) {
            return;
        }
        Files.createDirectories(dir, OWNER_ONLY);
        for (Path p : missing) {
            if (p.getParent() != null) {
                fsyncDirectory(p.getParent());
            }
        }
    }

    /** Makes the creations, links, renames and deletions in {@code dir} durable. */
    static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
