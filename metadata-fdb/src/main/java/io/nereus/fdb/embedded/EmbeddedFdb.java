package io.nereus.fdb.embedded;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.DatabaseOptions;
import com.apple.foundationdb.EventKeeper;
import com.apple.foundationdb.KeyRangeArrayResult;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Tenant;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;

/** SKELETON: public surface only; the engine lands in the next commit. */
public final class EmbeddedFdb implements Database {
    public static EmbeddedFdb inMemory() { return builder().build(); }
    public static EmbeddedFdb open(Path dir) { return builder().directory(dir).build(); }
    public static Builder builder() { return new Builder(); }

    public static final class Builder {
        public Builder directory(Path dir) { return this; }
        public Builder mvccWindow(Duration window) { return this; }
        public Builder clock(Clock clock) { return this; }
        public Builder executor(Executor executor) { return this; }
        public Builder compactionThresholdBytes(long bytes) { return this; }
        public EmbeddedFdb build() { return new EmbeddedFdb(); }
    }

    public void injectCommitFaults(CommitFault fault, int count) { }
    public EmbeddedStats stats() { return null; }

    /** Point-in-time figures about the engine's memory use. */
    public record EmbeddedStats(long liveKeys, long versionEntries, long conflictBoundaries, long committedVersion) { }

    private static RuntimeException todo() { return new IllegalStateException("skeleton"); }
    @Override public Tenant openTenant(Tuple n) { throw todo(); }
    @Override public Tenant openTenant(byte[] n, Executor e) { throw todo(); }
    @Override public Tenant openTenant(Tuple n, Executor e) { throw todo(); }
    @Override public Tenant openTenant(byte[] n, Executor e, EventKeeper k) { throw todo(); }
    @Override public Tenant openTenant(Tuple n, Executor e, EventKeeper k) { throw todo(); }
    @Override public Transaction createTransaction(Executor e) { throw todo(); }
    @Override public Transaction createTransaction(Executor e, EventKeeper k) { throw todo(); }
    @Override public DatabaseOptions options() { throw todo(); }
    @Override public double getMainThreadBusyness() { return 0; }
    @Override public CompletableFuture<byte[]> purgeBlobGranules(byte[] b, byte[] e, long v, boolean f, Executor x) { throw todo(); }
    @Override public CompletableFuture<Void> waitPurgeGranulesComplete(byte[] k, Executor e) { throw todo(); }
    @Override public CompletableFuture<Boolean> blobbifyRange(byte[] b, byte[] e, Executor x) { throw todo(); }
    @Override public CompletableFuture<Boolean> blobbifyRangeBlocking(byte[] b, byte[] e, Executor x) { throw todo(); }
    @Override public CompletableFuture<Boolean> unblobbifyRange(byte[] b, byte[] e, Executor x) { throw todo(); }
    @Override public CompletableFuture<KeyRangeArrayResult> listBlobbifiedRanges(byte[] b, byte[] e, int l, Executor x) { throw todo(); }
    @Override public CompletableFuture<Long> verifyBlobRange(byte[] b, byte[] e, long v, Executor x) { throw todo(); }
    @Override public CompletableFuture<Boolean> flushBlobRange(byte[] b, byte[] e, boolean c, long v, Executor x) { throw todo(); }
    @Override public <T> T read(Function<? super ReadTransaction, T> f, Executor e) { throw todo(); }
    @Override public <T> CompletableFuture<T> readAsync(Function<? super ReadTransaction, ? extends CompletableFuture<T>> f, Executor e) { throw todo(); }
    @Override public <T> T run(Function<? super Transaction, T> f, Executor e) { throw todo(); }
    @Override public <T> CompletableFuture<T> runAsync(Function<? super Transaction, ? extends CompletableFuture<T>> f, Executor e) { throw todo(); }
    @Override public void close() { }
    @Override public CompletableFuture<byte[]> getClientStatus(Executor e) { throw todo(); }
    @Override public Executor getExecutor() { throw todo(); }
}
