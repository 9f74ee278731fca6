package org.apache.bookkeeper.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.security.GeneralSecurityException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.bookkeeper.client.api.LastConfirmedAndEntry;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.OpenBuilder;
import org.apache.bookkeeper.client.api.DeleteBuilder;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteFlag;
import org.apache.bookkeeper.client.impl.LedgerEntriesImpl;
import org.apache.bookkeeper.client.impl.LedgerEntryImpl;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.apache.bookkeeper.meta.LedgerManager;
import org.apache.bookkeeper.proto.BookkeeperInternalCallbacks;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.versioning.LongVersion;
import org.apache.bookkeeper.versioning.Version;
import org.apache.bookkeeper.versioning.Versioned;

/**
 * A BookKeeper client over simulated, in-memory bookies ({@link Bookies}) for the deterministic simulation: the
 * calls the WAL makes ({@code asyncCreateLedger}, the open and delete builders, {@code WriteHandle.appendAsync},
 * {@code ReadHandle.readUnconfirmedAsync}/{@code readLastAddConfirmedAsync}, closing) take effect on the bookies when
 * they are made, with the faults the simulation armed, and their replies reach the client later: on the client's
 * {@code replies} executor after a delay drawn from the client's seeded random (up to {@link #MAX_REPLY_MICROS}; a
 * timed-out add's after {@link #TIMEOUT_MILLIS}), the adds of one handle in the order they were made, as
 * BookKeeper completes them. One client per simulated broker process; {@link #crash} makes every later call of it
 * and of its handles fail, as a dead process makes no more requests.
 *
 * <p>It lives in BookKeeper's package because {@link LedgerHandle}'s constructor and {@link BookKeeper}'s no-argument
 * constructor are package-private (as Pulsar's {@code PulsarMockBookKeeper} does). Its ledger manager reads ledger
 * metadata and writes a close ({@code WalLedgers.closeAt}, the WAL's salvage of a ledger whose last entry is torn,
 * see {@link AddFault#TORN}); nothing else of it is simulated. A writer's handle closes its ledger at the last entry
 * it was told was added, as BookKeeper's does; recovery closes it at the last entry the bookies hold.
 */
public final class SimBookKeeper extends BookKeeper {
    /** Never runs a task: LedgerHandle's constructor only picks a thread of it. */
    private static final OrderedExecutor UNUSED_POOL = OrderedExecutor.newBuilder().numThreads(1)
            .name("sim-bk-unused").build();
    private static final List<BookieId> ENSEMBLE = List.of(BookieId.parse("sim-bookie:3181"));

    /** What the next add reaching the bookies does, armed by the simulation. */
    public enum AddFault {
        /** The add fails and nothing is stored. */
        FAILED_NOT_STORED,
        /** The add is stored on the bookies, then times out before the writer hears of it (lost acknowledgement). */
        TIMED_OUT_STORED,
        /** The add times out and nothing is stored. */
        TIMED_OUT_NOT_STORED,
        /**
         * The add reaches the bookies torn (every bookie holding it crashed in the middle of the write): stored but
         * unreadable, its digest does not match; the add times out. BookKeeper can then neither recover the ledger
         * nor learn its last entry, and the WAL salvages the slice (closing the ledger at its last committed entry).
         */
        TORN
    }

    /** The simulated bookies and ledger metadata, shared by every client of one simulated cluster. Thread-safe. */
    public static final class Bookies {
        private final Map<Long, Ledger> ledgers = new HashMap<>();
        private final Deque<AddFault> addFaults = new ArrayDeque<>();
        private long nextId = 1;
        private boolean down;

        /** The next {@code count} adds reaching the bookies do {@code fault}. */
        public synchronized void injectAddFaults(AddFault fault, int count) {
            for (int i = 0; i < count; i++) {
                addFaults.add(fault);
            }
        }

        /** Every bookie gone (true) or back (false): creates, adds, recoveries and reads fail while gone. */
        public synchronized void setDown(boolean gone) {
            down = gone;
        }

        public synchronized boolean isDown() {
            return down;
        }

        /** Every ledger is lost (a BookKeeper losing acknowledged data; for tests that the simulation notices). */
        public synchronized void wipe() {
            ledgers.clear();
        }

        public synchronized int ledgerCount() {
            return ledgers.size();
        }

        synchronized Ledger create(byte[] password, Map<String, byte[]> custom) throws BKException {
            if (down) {
                throw BKException.create(BKException.Code.NotEnoughBookiesException);
            }
            Ledger l = new Ledger(nextId++, password, custom);
            ledgers.put(l.id, l);
            return l;
        }

        synchronized Ledger get(long id) throws BKException {
            Ledger l = ledgers.get(id);
            if (l == null) {
                throw BKException.create(BKException.Code.NoSuchLedgerExistsOnMetadataServerException);
            }
            return l;
        }

        synchronized long add(Ledger l, WriteLedgerHandle writer, byte[] data) throws BKException {
            if (writer.broken) {
                throw BKException.create(BKException.Code.LedgerClosedException);
            }
            if (l.closed || l.fenced) {
                writer.broken = true;
                throw BKException.create(l.fenced ? BKException.Code.LedgerFencedException
                        : BKException.Code.LedgerClosedException);
            }
            if (down) {
                writer.broken = true;
                throw BKException.create(BKException.Code.BookieHandleNotAvailableException);
            }
            AddFault fault = addFaults.poll();
            if (fault == null) {
                l.entries.add(data);
                writer.lastAcked = l.entries.size() - 1;
                return writer.lastAcked;
            }
            // a failed add leaves the handle unusable, as BookKeeper's LedgerHandle errors out its later adds
            writer.broken = true;
            if (fault == AddFault.TIMED_OUT_STORED || fault == AddFault.TORN) {
                l.entries.add(data);
            }
            if (fault == AddFault.TORN) {
                l.torn = l.entries.size() - 1;
            }
            throw BKException.create(fault == AddFault.FAILED_NOT_STORED ? BKException.Code.NotEnoughBookiesException
                    : BKException.Code.AddEntryQuorumTimeoutException);
        }

        /** The writer closes its ledger at the last entry it was told was added (its last add confirmed). */
        synchronized void close(Ledger l, long lastAddConfirmed) {
            if (!l.closed) {
                closeAt(l, lastAddConfirmed);
            }
        }

        private static void closeAt(Ledger l, long last) {
            l.closed = true;
            l.closedLast = last;
            l.metadataVersion++;
        }

        /**
         * Recovery: fences the ledger and closes it at the last entry the bookies hold; fails, leaving the ledger
         * fenced and open, when that entry is torn (unreadable).
         */
        synchronized Ledger recover(long id) throws BKException {
            if (down) {
                throw BKException.create(BKException.Code.BookieHandleNotAvailableException);
            }
            Ledger l = get(id);
            if (!l.closed) {
                l.fenced = true;
                if (l.tornAtEnd()) {
                    throw BKException.create(BKException.Code.DigestMatchException);
                }
                closeAt(l, l.entries.size() - 1);
            }
            return l;
        }

        synchronized List<byte[]> read(Ledger l, long first, long last) throws BKException {
            if (down) {
                throw BKException.create(BKException.Code.BookieHandleNotAvailableException);
            }
            if (first < 0 || last < first || last >= l.entries.size()) {
                throw BKException.create(BKException.Code.NoSuchEntryException);
            }
            if (l.torn >= first && l.torn <= last) {
                throw BKException.create(BKException.Code.DigestMatchException);
            }
            return new ArrayList<>(l.entries.subList((int) first, (int) last + 1));
        }

        /**
         * The last entry: where the ledger was closed, else the bookies' last one; unknowable when that one is torn,
         * and BookKeeper's open without recovery then fails with a read error (as {@code LedgerOpenOp} reports a
         * failed read of the last add confirmed).
         */
        synchronized long lastEntry(Ledger l) throws BKException {
            if (l.closed) {
                return l.closedLast;
            }
            if (l.tornAtEnd()) {
                throw BKException.create(BKException.Code.ReadException);
            }
            return l.entries.size() - 1;
        }

        /** The ledger's metadata and its version (in BookKeeper's metadata store). */
        synchronized Versioned<LedgerMetadata> metadata(long id) throws BKException {
            Ledger l = get(id);
            return new Versioned<>(SimBookKeeper.metadata(l, l.closed, l.closedLast), new LongVersion(l.metadataVersion));
        }

        /** Writes the ledger's metadata if it is still at {@code version}; only closing it is simulated. */
        synchronized Versioned<LedgerMetadata> writeMetadata(long id, LedgerMetadata m, Version version)
                throws BKException {
            Ledger l = get(id);
            if (!(version instanceof LongVersion v) || v.getLongVersion() != l.metadataVersion) {
                throw BKException.create(BKException.Code.MetadataVersionException);
            }
            if (m.isClosed() && !l.closed) {
                closeAt(l, m.getLastEntryId());
            }
            return new Versioned<>(SimBookKeeper.metadata(l, l.closed, l.closedLast), new LongVersion(l.metadataVersion));
        }

        synchronized void delete(long id) throws BKException {
            if (ledgers.remove(id) == null) {
                throw BKException.create(BKException.Code.NoSuchLedgerExistsOnMetadataServerException);
            }
        }
    }

    /** One ledger on the simulated bookies; guarded by its {@link Bookies}. */
    static final class Ledger {
        final long id;
        final byte[] password;
        final Map<String, byte[]> custom;
        final List<byte[]> entries = new ArrayList<>();
        boolean closed;
        /** The last entry of a closed ledger (in its metadata). */
        long closedLast = -1;
        boolean fenced;
        /** The entry stored torn (unreadable), -1 when none. */
        long torn = -1;
        long metadataVersion;

        boolean tornAtEnd() {
            return torn >= 0 && torn == entries.size() - 1;
        }

        Ledger(long id, byte[] password, Map<String, byte[]> custom) {
            this.id = id;
            this.password = password.clone();
            this.custom = custom == null ? Map.of() : Map.copyOf(custom);
        }
    }

    /** Longest delay of a reply, in microseconds. */
    public static final int MAX_REPLY_MICROS = 2_000;
    /** How long a timed-out add takes to fail: about BookKeeper's add timeout. */
    public static final int TIMEOUT_MILLIS = 3_000;

    private final Bookies bookies;
    private final ScheduledExecutorService replies;
    private final LongSupplier nanoTime;
    private final Random random;
    private volatile boolean crashed;

    /**
     * A client of {@code bookies} whose replies run on {@code replies} after delays drawn from {@code random};
     * {@code nanoTime} is the time of {@code replies}.
     */
    public SimBookKeeper(Bookies bookies, ScheduledExecutorService replies, LongSupplier nanoTime, Random random) {
        super();
        this.bookies = bookies;
        this.replies = replies;
        this.nanoTime = nanoTime;
        this.random = random;
    }

    /**
     * Does {@code op} on the bookies now and completes the returned future with its outcome later, on the replies
     * executor; after the reply of {@code order} (a write handle whose adds complete in order), when given.
     */
    private <T> CompletableFuture<T> reply(WriteLedgerHandle order, long delayNanos, Callable<T> op) {
        CompletableFuture<T> f = new CompletableFuture<>();
        T value = null;
        Throwable error = null;
        try {
            value = op.call();
        } catch (Exception e) {
            error = e;
        }
        long now = nanoTime.getAsLong();
        long due = now + delayNanos + TimeUnit.MICROSECONDS.toNanos(random.nextInt(MAX_REPLY_MICROS));
        if (order != null) {
            due = Math.max(due, order.lastReplyDue);
            order.lastReplyDue = due;
        }
        T v = value;
        Throwable e = error;
        replies.schedule(() -> {
            if (e != null) {
                f.completeExceptionally(e);
            } else {
                f.complete(v);
            }
        }, due - now, TimeUnit.NANOSECONDS);
        return f;
    }

    private <T> CompletableFuture<T> reply(Callable<T> op) {
        return reply(null, 0, op);
    }

    /** This client's process died: every later call of it or its handles fails. */
    public void crash() {
        crashed = true;
    }

    private void alive() throws BKException {
        if (crashed) {
            throw BKException.create(BKException.Code.ClientClosedException);
        }
    }

    @Override
    public OrderedExecutor getMainWorkerPool() {
        return UNUSED_POOL;
    }

    @Override
    public void asyncCreateLedger(int ensSize, int writeQuorumSize, int ackQuorumSize, DigestType digestType,
            byte[] passwd, AsyncCallback.CreateCallback cb, Object ctx, Map<String, byte[]> customMetadata) {
        reply(() -> {
            alive();
            return new WriteLedgerHandle(this, bookies.create(passwd, customMetadata));
        }).whenComplete((handle, error) -> {
            if (error == null) {
                cb.createComplete(BKException.Code.OK, handle, ctx);
            } else {
                cb.createComplete(error instanceof BKException e ? e.getCode()
                        : BKException.Code.UnexpectedConditionException, null, ctx);
            }
        });
    }

    @Override
    public OpenBuilder newOpenLedgerOp() {
        return new OpenBuilder() {
            private long id;
            private boolean recovery;

            @Override
            public OpenBuilder withLedgerId(long ledgerId) {
                id = ledgerId;
                return this;
            }

            @Override
            public OpenBuilder withRecovery(boolean r) {
                recovery = r;
                return this;
            }

            @Override
            public OpenBuilder withPassword(byte[] password) {
                return this;
            }

            @Override
            public OpenBuilder withDigestType(org.apache.bookkeeper.client.api.DigestType digestType) {
                return this;
            }

            @Override
            public CompletableFuture<ReadHandle> execute() {
                return reply(() -> {
                    alive();
                    Ledger l = recovery ? bookies.recover(id) : bookies.get(id);
                    return new SimReadHandle(l, bookies.lastEntry(l)); // an unclosed torn ledger does not open
                });
            }
        };
    }

    @Override
    public DeleteBuilder newDeleteLedgerOp() {
        return new DeleteBuilder() {
            private long id;

            @Override
            public DeleteBuilder withLedgerId(long ledgerId) {
                id = ledgerId;
                return this;
            }

            @Override
            public CompletableFuture<Void> execute() {
                return reply(() -> {
                    alive();
                    bookies.delete(id);
                    return null;
                });
            }
        };
    }

    @Override
    public CompletableFuture<LedgerMetadata> getLedgerMetadata(long ledgerId) {
        return reply(() -> {
            alive();
            return bookies.metadata(ledgerId).getValue();
        });
    }

    /** Ledger metadata reads and writes, for closing a ledger without recovery ({@code WalLedgers.closeAt}). */
    @Override
    public LedgerManager getLedgerManager() {
        return ledgerManager;
    }

    private final LedgerManager ledgerManager = new LedgerManager() {
        @Override
        public CompletableFuture<Versioned<LedgerMetadata>> readLedgerMetadata(long ledgerId) {
            return reply(() -> {
                alive();
                return bookies.metadata(ledgerId);
            });
        }

        @Override
        public CompletableFuture<Versioned<LedgerMetadata>> writeLedgerMetadata(long ledgerId, LedgerMetadata metadata,
                Version currentVersion) {
            return reply(() -> {
                alive();
                return bookies.writeMetadata(ledgerId, metadata, currentVersion);
            });
        }

        @Override
        public CompletableFuture<Versioned<LedgerMetadata>> createLedgerMetadata(long ledgerId,
                LedgerMetadata metadata) {
            throw new UnsupportedOperationException("not simulated");
        }

        @Override
        public CompletableFuture<Void> removeLedgerMetadata(long ledgerId, Version version) {
            throw new UnsupportedOperationException("not simulated");
        }

        @Override
        public void registerLedgerMetadataListener(long ledgerId,
                BookkeeperInternalCallbacks.LedgerMetadataListener listener) {
            throw new UnsupportedOperationException("not simulated");
        }

        @Override
        public void unregisterLedgerMetadataListener(long ledgerId,
                BookkeeperInternalCallbacks.LedgerMetadataListener listener) {
            throw new UnsupportedOperationException("not simulated");
        }

        @Override
        public void asyncProcessLedgers(BookkeeperInternalCallbacks.Processor<Long> processor,
                org.apache.zookeeper.AsyncCallback.VoidCallback finalCb, Object context, int successRc, int failureRc) {
            throw new UnsupportedOperationException("not simulated");
        }

        @Override
        public LedgerRangeIterator getLedgerRanges(long zkOpTimeOutMs) {
            throw new UnsupportedOperationException("not simulated");
        }

        @Override
        public void close() {
        }
    };

    @Override
    public void close() {
        crashed = true;
    }

    static LedgerMetadata metadata(Ledger l, boolean closed, long lastEntry) {
        LedgerMetadataBuilder b = LedgerMetadataBuilder.create().withId(l.id).withEnsembleSize(1)
                .withWriteQuorumSize(1).withAckQuorumSize(1).withDigestType(DigestType.CRC32C.toApiDigestType())
                .withPassword(l.password).newEnsembleEntry(0L, ENSEMBLE).withCustomMetadata(l.custom);
        if (closed) {
            b.withClosedState().withLastEntryId(lastEntry).withLength(0);
        }
        return b.build();
    }

    private static LedgerEntries entries(long ledgerId, long first, List<byte[]> data) {
        List<LedgerEntry> out = new ArrayList<>(data.size());
        for (int i = 0; i < data.size(); i++) {
            byte[] d = data.get(i);
            out.add(LedgerEntryImpl.create(ledgerId, first + i, d.length, Unpooled.wrappedBuffer(d)));
        }
        return LedgerEntriesImpl.create(out);
    }

    /** The writer's handle of a ledger this client created. */
    final class WriteLedgerHandle extends LedgerHandle {
        private final Ledger ledger;
        boolean broken;
        /** The last entry whose add succeeded: where closing this handle closes the ledger. */
        long lastAcked = -1;
        /** When the last reply to this handle's adds is due: replies keep the order of the adds. */
        long lastReplyDue;

        WriteLedgerHandle(SimBookKeeper bk, Ledger ledger) throws GeneralSecurityException {
            super(bk.getClientCtx(), ledger.id, new Versioned<>(metadata(ledger, false, -1), new LongVersion(0)),
                    DigestType.CRC32C, ledger.password, EnumSet.noneOf(WriteFlag.class));
            this.ledger = ledger;
        }

        @Override
        public CompletableFuture<Long> appendAsync(ByteBuf data) {
            byte[] bytes = new byte[data.readableBytes()];
            data.getBytes(data.readerIndex(), bytes);
            data.release();
            Long entryId = null;
            BKException error = null;
            try {
                alive();
                entryId = bookies.add(ledger, this, bytes);
            } catch (BKException e) {
                error = e;
            }
            boolean timedOut = error != null && error.getCode() == BKException.Code.AddEntryQuorumTimeoutException;
            Long id = entryId;
            BKException e = error;
            return reply(this, timedOut ? TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS) : 0, () -> {
                if (e != null) {
                    throw e;
                }
                return id;
            });
        }

        @Override
        public CompletableFuture<Void> closeAsync() {
            return reply(this, 0, () -> {
                alive();
                bookies.close(ledger, lastAcked);
                return null;
            });
        }

        @Override
        public long getId() {
            return ledger.id;
        }

        @Override
        public synchronized long getLastAddConfirmed() {
            return lastAcked;
        }

        @Override
        public synchronized boolean isClosed() {
            synchronized (bookies) {
                return ledger.closed;
            }
        }
    }

    /** A reader's handle, opened with or without recovery. */
    final class SimReadHandle implements ReadHandle {
        private final Ledger ledger;
        private final boolean closedAtOpen;
        private final long lastAtOpen;
        private final LedgerMetadata metadataAtOpen;

        /** A handle on {@code ledger}, opened when its last entry was {@code last}. */
        SimReadHandle(Ledger ledger, long last) {
            this.ledger = ledger;
            synchronized (bookies) {
                closedAtOpen = ledger.closed;
            }
            lastAtOpen = last;
            metadataAtOpen = metadata(ledger, closedAtOpen, lastAtOpen);
        }

        @Override
        public CompletableFuture<LedgerEntries> readAsync(long first, long last) {
            return readUnconfirmedAsync(first, last);
        }

        @Override
        public CompletableFuture<LedgerEntries> readUnconfirmedAsync(long first, long last) {
            return reply(() -> {
                alive();
                return entries(ledger.id, first, bookies.read(ledger, first, last));
            });
        }

        @Override
        public CompletableFuture<Long> readLastAddConfirmedAsync() {
            return reply(() -> {
                alive();
                if (bookies.isDown()) {
                    throw BKException.create(BKException.Code.BookieHandleNotAvailableException);
                }
                return bookies.lastEntry(ledger);
            });
        }

        @Override
        public CompletableFuture<Long> tryReadLastAddConfirmedAsync() {
            return readLastAddConfirmedAsync();
        }

        @Override
        public long getLastAddConfirmed() {
            if (closedAtOpen) {
                return lastAtOpen;
            }
            try {
                return Math.max(lastAtOpen, bookies.lastEntry(ledger));
            } catch (BKException e) {
                return lastAtOpen;
            }
        }

        @Override
        public long getLength() {
            return 0;
        }

        @Override
        public boolean isClosed() {
            return closedAtOpen;
        }

        @Override
        public CompletableFuture<LastConfirmedAndEntry> readLastAddConfirmedAndEntryAsync(long entryId,
                long timeOutInMillis, boolean parallel) {
            return CompletableFuture.failedFuture(new UnsupportedOperationException("not simulated"));
        }

        @Override
        public long getId() {
            return ledger.id;
        }

        @Override
        public CompletableFuture<Void> closeAsync() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public LedgerMetadata getLedgerMetadata() {
            return metadataAtOpen;
        }
    }
}
