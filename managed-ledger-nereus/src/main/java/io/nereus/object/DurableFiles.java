package io.nereus.object;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/** The fsync steps that make creating files and directories survive a crash. */
final class DurableFiles {
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
        Files.createDirectories(dir);
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
