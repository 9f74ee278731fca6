package io.nereus.object;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.ReadOnlyFileSystemException;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded {@link ObjectStore}: objects are files in one local directory, for a single broker.
 *
 * <h2>Directory layout</h2>
 * <ul>
 *   <li>{@code <name>}: the object {@code name}, its {@code /}-separated segments as subdirectories.</li>
 *   <li>{@code .tmp/<n>.tmp}: an object being written. No object name has a segment starting with {@code .}, so
 *       neither these nor {@code .lock} are ever listed or clash with an object.</li>
 *   <li>{@code .lock}: an empty file holding an OS file lock while the store is open, so that two stores (two
 *       processes, or two opens in one process) never share the directory.</li>
 * </ul>
 *
 * <h2>Writing</h2>
 * A put writes the content (or copies a file's content, {@link ObjectContent#ofFile}, in bounded pieces) to a new
 * temporary file, fsyncs it, then creates the object as a hard link to it
 * ({@link Files#createLink}, which like {@code link(2)} fails when the name exists, where a rename would replace
 * it), fsyncs the object's directory and removes the temporary file. So an object appears whole or not at all,
 * an existing one is never replaced (of racing puts of one name exactly one links), and a completed put survives
 * a crash. A crash leaves at most temporary files, which {@link #open} deletes (it holds the lock, so they are
 * nobody's) before it checks that the filesystem supports hard links. Directories made for names are created
 * durably and left in place when their objects are removed.
 *
 * <h2>Direct I/O</h2>
 * With {@link ObjectStoreConfig.Filesystem#directIo} and where the directory's filesystem allows it ({@link #open}
 * tries), objects are written and read with direct I/O, past the page cache ({@link DirectFiles}); otherwise through
 * it. Either way the files are the same.
 *
 * <h2>Threads</h2>
 * Blocking file I/O runs on the store's own bounded pool of {@code ioThreads} daemon threads (idle ones end),
 * never on the caller's thread; futures complete there. {@link #close()} lets queued calls finish (for at most
 * {@value #CLOSE_WAIT_SECONDS} s) and then releases the lock.
 */
public final class FilesystemObjectStore implements ObjectStore {
    static final String TMP_DIR = ".tmp";
    static final String LOCK_FILE = ".lock";
    static final String TMP_SUFFIX = ".tmp";
    static final String VERSION_PREFIX = "crc32c:";
    static final long CLOSE_WAIT_SECONDS = 30;
    private static final Logger LOG = LoggerFactory.getLogger(FilesystemObjectStore.class);
    /** Where {@link #getBuffer}'s buffers come from: Netty's pooled allocator, as the WAL's batches. */
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    private final Path root;
    private final Path tmp;
    private final ThreadPoolExecutor io;
    private final FileChannel lockChannel;
    private final FileLock lock;
    /** Direct I/O for object files, or null where the filesystem refuses it. */
    private final DirectFiles direct;
    private final AtomicLong tempFiles = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();

    private FilesystemObjectStore(Path root, ThreadPoolExecutor io, FileChannel lockChannel, FileLock lock,
            DirectFiles direct) {
        this.root = root;
        this.tmp = root.resolve(TMP_DIR);
        this.io = io;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.direct = direct;
    }

    /**
     * Opens the store in {@code config.dir()}, creating the directory if missing: takes the lock, deletes leftover
     * temporary files and checks that hard links work. Fails with OBJECT_STORE_REFUSED (context {@code dir},
     * {@code reason}) when the directory is a file, is not accessible, is locked by another store or its
     * filesystem cannot link, with RETRIABLE_OBJECT_STORE_FAILED on another I/O error.
     */
    public static CompletableFuture<FilesystemObjectStore> open(ObjectStoreConfig.Filesystem config) {
        if (config == null) {
            return CompletableFuture.failedFuture(new NullPointerException("config"));
        }
        ThreadPoolExecutor io = executor(config.ioThreads());
        CompletableFuture<FilesystemObjectStore> opened = new CompletableFuture<>();
        io.execute(() -> {
            try {
                opened.complete(openIn(config.dir(), config.directIo(), io));
            } catch (NereusException e) {
                io.shutdown();
                opened.completeExceptionally(e);
            } catch (IOException | RuntimeException e) {
                io.shutdown();
                opened.completeExceptionally(failure("open", "dir", config.dir(), e));
            }
        });
        return opened;
    }

    private static FilesystemObjectStore openIn(Path root, boolean directIo, ThreadPoolExecutor io)
            throws IOException {
        try {
            DurableFiles.createDirectories(root);
        } catch (FileAlreadyExistsException e) {
            throw refused(root, "the path exists and is not a directory");
        }
        FileChannel lockChannel = FileChannel.open(root.resolve(LOCK_FILE), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        FileLock lock = null;
        try {
            try {
                lock = lockChannel.tryLock();
            } catch (OverlappingFileLockException e) {
                throw refused(root, "an object store of this process has the directory open");
            }
            if (lock == null) {
                throw refused(root, "another process holds " + LOCK_FILE);
            }
            Path tmp = root.resolve(TMP_DIR);
            DurableFiles.createDirectories(tmp);
            int removed = removeLeftovers(tmp);
            if (removed > 0) {
                LOG.info("Removed leftover temporary object files dir={} count={}", root, removed);
            }
            checkHardLinks(root, tmp);
            DirectFiles direct = directIo ? DirectFiles.probe(tmp, "direct-probe" + TMP_SUFFIX).orElse(null) : null;
            LOG.info("Filesystem object store opened dir={} directIo={}", root, direct != null);
            return new FilesystemObjectStore(root, io, lockChannel, lock, direct);
        } catch (IOException | RuntimeException e) {
            if (lock != null) {
                lock.release();
            }
            lockChannel.close();
            throw e;
        }
    }

    @Override
    public CompletableFuture<StoredObject> putNew(ObjectName name, ObjectContent content) {
        Optional<RuntimeException> bad = ObjectErrors.badPut(name, content);
        if (bad.isPresent()) {
            return CompletableFuture.failedFuture(bad.get());
        }
        return run("put", "name", name, () -> put(name, content));
    }

    @Override
    public CompletableFuture<byte[]> get(ObjectName name, ByteRange range) {
        return get(name, range, () -> read(name, range));
    }

    /**
     * As {@link #get}, into a pooled direct buffer: with direct I/O read straight into it (no copy, no heap array),
     * otherwise through the page cache into it.
     */
    @Override
    public CompletableFuture<ByteBuf> getBuffer(ObjectName name, ByteRange range) {
        return get(name, range, () -> readBuffer(name, range));
    }

    private <T> CompletableFuture<T> get(ObjectName name, ByteRange range, IoCall<T> read) {
        Optional<RuntimeException> bad = ObjectErrors.badGet(name, range);
        if (bad.isPresent()) {
            return CompletableFuture.failedFuture(bad.get());
        }
        return run("get", "name", name, read);
    }

    @Override
    public CompletableFuture<Void> delete(ObjectName name) {
        Optional<RuntimeException> bad = ObjectErrors.badName(name);
        if (bad.isPresent()) {
            return CompletableFuture.failedFuture(bad.get());
        }
        return run("delete", "name", name, () -> {
            remove(name);
            return null;
        });
    }

    @Override
    public CompletableFuture<List<ObjectInfo>> list(String prefix) {
        Optional<RuntimeException> bad = ObjectErrors.badPrefix(prefix);
        if (bad.isPresent()) {
            return CompletableFuture.failedFuture(bad.get());
        }
        return run("list", "prefix", prefix, () -> listing(prefix));
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        io.shutdown();
        try {
            if (!io.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
                LOG.warn("Object store calls still running at close dir={}", root);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            LOG.warn("Object store lock not released cleanly dir={}", root, e);
        }
    }

    /** Whether object files are written and read with direct I/O (configured, and the filesystem allows it). */
    boolean usesDirectIo() {
        return direct != null;
    }

    /** The store's directory. */
    public Path dir() {
        return root;
    }

    @Override
    public String toString() {
        return "filesystem object store at " + root;
    }

    // ------------------------------------------------------------------------------------------- operations

    private StoredObject put(ObjectName name, ObjectContent content) throws IOException {
        Path target = path(name);
        Path temp = tmp.resolve(tempFiles.incrementAndGet() + TMP_SUFFIX);
        try {
            long crc;
            if (direct != null) {
                crc = direct.writeNew(temp, content);
            } else {
                try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.WRITE)) {
                    crc = content.writeTo(ch);
                    ch.force(true);
                }
            }
            Path dir = target.getParent();
            try {
                DurableFiles.createDirectories(dir);
            } catch (FileSystemException e) {
                Optional<Path> file = fileAmongParents(dir);
                if (file.isPresent()) {
                    throw ObjectErrors.exists(name, "object " + relative(file.get()) + " is a file");
                }
                throw e;
            }
            try {
                Files.createLink(target, temp);
            } catch (FileAlreadyExistsException e) {
                throw ObjectErrors.exists(name);
            }
            DurableFiles.fsyncDirectory(dir);
            return new StoredObject(name, content.length(), VERSION_PREFIX + String.format("%08x", crc));
        } finally {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException e) {
                LOG.warn("Temporary object file not removed (removed at the next open) file={}", temp, e);
            }
        }
    }

    private byte[] read(ObjectName name, ByteRange range) throws IOException {
        int length = (int) range.length();
        return read(name, range, ch -> direct.read(ch, range.offset(), length), ch -> {
            byte[] out = new byte[length];
            readFully(name, range, ch, ByteBuffer.wrap(out));
            return out;
        });
    }

    private ByteBuf readBuffer(ObjectName name, ByteRange range) throws IOException {
        int length = (int) range.length();
        return read(name, range, ch -> direct.readBuffer(ch, range.offset(), length, ALLOC), ch -> {
            ByteBuf out = ALLOC.directBuffer(length);
            try {
                readFully(name, range, ch, out.nioBuffer(0, length));
                return out.writerIndex(length);
            } catch (IOException | RuntimeException e) {
                out.release();
                throw e;
            }
        });
    }

    /** What a read does with the object's open file: through {@link #direct}, or through the page cache. */
    private interface ChannelRead<T> {
        T read(FileChannel ch) throws IOException;
    }

    private <T> T read(ObjectName name, ByteRange range, ChannelRead<T> directRead, ChannelRead<T> cachedRead)
            throws IOException {
        Path path = path(name);
        if (!isObject(path)) {
            throw ObjectErrors.missing(name);
        }
        try (FileChannel ch = direct != null ? direct.openForReading(path)
                : FileChannel.open(path, StandardOpenOption.READ)) {
            if (!range.within(ch.size())) {
                throw ObjectErrors.range(name, range);
            }
            if (direct != null) {
                try {
                    return directRead.read(ch);
                } catch (EOFException e) {
                    throw ObjectErrors.range(name, range); // shortened since ch.size()
                }
            }
            return cachedRead.read(ch);
        } catch (NoSuchFileException e) {
            throw ObjectErrors.missing(name); // removed since isObject
        }
    }

    private static void readFully(ObjectName name, ByteRange range, FileChannel ch, ByteBuffer out)
            throws IOException {
        while (out.hasRemaining()) {
            if (ch.read(out, range.offset() + out.position()) < 0) {
                throw ObjectErrors.range(name, range);
            }
        }
    }

    private void remove(ObjectName name) throws IOException {
        Path path = path(name);
        if (!isObject(path)) {
            return;
        }
        try {
            Files.delete(path);
        } catch (NoSuchFileException e) {
            return;
        }
        DurableFiles.fsyncDirectory(path.getParent());
    }

    private List<ObjectInfo> listing(String prefix) throws IOException {
        int slash = prefix.lastIndexOf('/');
        Path start = slash < 0 ? root : root.resolve(prefix.substring(0, slash));
        List<ObjectInfo> out = new ArrayList<>();
        if (!Files.isDirectory(start, LinkOption.NOFOLLOW_LINKS)) {
            return out;
        }
        Files.walkFileTree(start, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                if (dir.equals(start)) {
                    return FileVisitResult.CONTINUE;
                }
                String rel = relative(dir) + "/";
                boolean mayMatch = rel.startsWith(prefix) || prefix.startsWith(rel);
                return mayMatch && ObjectName.isValidPrefix(rel) ? FileVisitResult.CONTINUE
                        : FileVisitResult.SKIP_SUBTREE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                String rel = relative(file);
                if (attrs.isRegularFile() && rel.startsWith(prefix) && ObjectName.isValid(rel)) {
                    out.add(new ObjectInfo(new ObjectName(rel), attrs.size(), attrs.lastModifiedTime().toInstant()));
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE; // removed while listing
                }
                throw e;
            }
        });
        out.sort(Comparator.comparing(ObjectInfo::name));
        return out;
    }

    // ---------------------------------------------------------------------------------------------- helpers

    private Path path(ObjectName name) {
        return root.resolve(name.value());
    }

    /** {@code path} relative to the root, with {@code /} separators. */
    private String relative(Path path) {
        StringBuilder b = new StringBuilder();
        for (Path p : root.relativize(path)) {
            if (b.length() > 0) {
                b.append('/');
            }
            b.append(p);
        }
        return b.toString();
    }

    /** True when {@code path} is a regular file (not a directory of other names, not a link). */
    private static boolean isObject(Path path) throws IOException {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isRegularFile();
        } catch (NoSuchFileException e) {
            return false;
        } catch (FileSystemException e) {
            if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                return false; // a parent is a file ("not a directory")
            }
            throw e;
        }
    }

    /** The first regular file among the parents of {@code dir} up to the root (inclusive of {@code dir}). */
    private Optional<Path> fileAmongParents(Path dir) {
        for (Path p = dir; p != null && !p.equals(root); p = p.getParent()) {
            if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Runs {@code call} on the I/O pool; an I/O failure names {@code what} ({@code name}, {@code prefix}). */
    private <T> CompletableFuture<T> run(String op, String what, Object target, IoCall<T> call) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(ObjectErrors.closed(toString()));
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            io.execute(() -> {
                try {
                    result.complete(call.call());
                } catch (NereusException e) {
                    result.completeExceptionally(e);
                } catch (IOException | RuntimeException e) {
                    result.completeExceptionally(failure(op, what, target, e));
                }
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(ObjectErrors.closed(toString()));
        }
        return result;
    }

    /** An I/O failure: access denied is OBJECT_STORE_REFUSED, anything else RETRIABLE_OBJECT_STORE_FAILED. */
    private static NereusException failure(String op, String what, Object target, Exception e) {
        ErrorCode code = e instanceof AccessDeniedException || e instanceof ReadOnlyFileSystemException
                ? ErrorCode.OBJECT_STORE_REFUSED : ErrorCode.RETRIABLE_OBJECT_STORE_FAILED;
        return new NereusException(code, ErrorContext.of(what, target, "operation", op, "reason", e.toString()), e);
    }

    private static NereusException refused(Path dir, String reason) {
        return new NereusException(ErrorCode.OBJECT_STORE_REFUSED, ErrorContext.of("dir", dir, "reason", reason));
    }

    private static int removeLeftovers(Path tmp) throws IOException {
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(tmp)) {
            for (Path f : files) {
                Files.delete(f);
                removed++;
            }
        }
        if (removed > 0) {
            DurableFiles.fsyncDirectory(tmp);
        }
        return removed;
    }

    private static void checkHardLinks(Path root, Path tmp) throws IOException {
        Path probe = tmp.resolve("link-probe" + TMP_SUFFIX);
        Path link = tmp.resolve("link-probe-link" + TMP_SUFFIX);
        try {
            Files.createFile(probe);
            Files.createLink(link, probe);
        } catch (UnsupportedOperationException | FileSystemException e) {
            if (e instanceof AccessDeniedException) {
                throw e;
            }
            throw refused(root, "its filesystem does not support hard links (" + e + ")");
        } finally {
            Files.deleteIfExists(link);
            Files.deleteIfExists(probe);
        }
    }

    private static ThreadPoolExecutor executor(int threads) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "nereus-objects-fs-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    @FunctionalInterface
    private interface IoCall<T> {
        T call() throws IOException;
    }
}
