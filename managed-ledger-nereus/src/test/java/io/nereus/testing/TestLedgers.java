package io.nereus.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ReferenceCounted;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.WriteFlag;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.apache.bookkeeper.common.concurrent.FutureUtils;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.proto.DataFormats;
import org.apache.bookkeeper.proto.checksum.DigestManager;

/**
 * Ledgers made, opened and deleted by tests directly, through BookKeeper's current client API as the WAL does:
 * CRC32C digests, quorums 1/1/1. Each call waits at most 30 seconds.
 */
public final class TestLedgers {
    private static final long TIMEOUT_SECONDS = 30;

    private TestLedgers() {
    }

    /** A new ledger to write, as a WAL slice is (without the WAL's custom metadata). */
    public static WriteHandle create(BookKeeper bk, byte[] password) throws Exception {
        return FutureUtils.result(bk.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1)
                .withAckQuorumSize(1).withDigestType(DigestType.CRC32C).withPassword(password).execute(),
                TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    /** Opens ledger {@code id} to read, without recovery (its writer is not fenced). */
    public static ReadHandle openToRead(BookKeeper bk, long id, byte[] password) throws Exception {
        return open(bk, id, password, false);
    }

    /** Opens ledger {@code id} with recovery: fences it and closes it at the last entry the bookies hold. */
    public static ReadHandle recover(BookKeeper bk, long id, byte[] password) throws Exception {
        return open(bk, id, password, true);
    }

    private static ReadHandle open(BookKeeper bk, long id, byte[] password, boolean recovery) throws Exception {
        return FutureUtils.result(bk.newOpenLedgerOp().withLedgerId(id).withRecovery(recovery)
                .withDigestType(DigestType.CRC32C).withPassword(password).execute(), TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    /** Deletes ledger {@code id}. */
    public static void delete(BookKeeper bk, long id) throws Exception {
        FutureUtils.result(bk.newDeleteLedgerOp().withLedgerId(id).execute(), TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    /** True when BookKeeper still has ledger {@code id}. */
    public static boolean exists(BookKeeper bk, long id, byte[] password) throws Exception {
        try {
            openToRead(bk, id, password).close();
            return true;
        } catch (BKException.BKNoSuchLedgerExistsException | BKException.BKNoSuchLedgerExistsOnMetadataServerException e) {
            return false;
        }
    }

    /**
     * Writes entry {@code entryId} of ledger {@code id} straight to each bookie of its ensemble, as its writer would,
     * but torn: the digest covers {@code payload} while the bookies store it with its second half zeroed, as a
     * bookie's journal returns a record whose write a crash cut short (the journal's preallocated zeros fill the
     * rest). Neither recovery nor an open without recovery can then read the ledger's last entry.
     */
    public static void addTornEntry(org.apache.bookkeeper.client.BookKeeper bk, long id, byte[] password,
            long entryId, byte[] payload) throws Exception {
        LedgerMetadata metadata = FutureUtils.result(bk.getLedgerMetadata(id), TIMEOUT_SECONDS, TimeUnit.SECONDS);
        addTornEntry(bk, id, password, entryId, payload, metadata.getEnsembleAt(entryId));
    }

    /**
     * As {@link #addTornEntry(org.apache.bookkeeper.client.BookKeeper, long, byte[], long, byte[])}, to the given
     * bookies only. Over an entry a bookie already holds, this is bit rot under a committed entry: a bookie with
     * DbLedgerStorage serves the last write of an entry (one with SortedLedgerStorage keeps the first while it is in
     * its memtable).
     */
    public static void addTornEntry(org.apache.bookkeeper.client.BookKeeper bk, long id, byte[] password,
            long entryId, byte[] payload, List<BookieId> bookies) throws Exception {
        DigestManager digests = DigestManager.instantiate(id, password,
                DataFormats.LedgerMetadataFormat.DigestType.CRC32C, UnpooledByteBufAllocator.DEFAULT, false);
        byte[] masterKey = DigestManager.generateMasterKey(password);
        for (BookieId bookie : bookies) {
            ByteBuf data = Unpooled.wrappedBuffer(payload.clone());
            ReferenceCounted packet = digests.computeDigestAndPackageForSending(entryId, entryId - 1,
                    payload.length, data, masterKey, 0);
            data.setZero(payload.length / 2, payload.length - payload.length / 2);
            CompletableFuture<Void> written = new CompletableFuture<>();
            bk.getClientCtx().getBookieClient().addEntry(bookie, id, masterKey, entryId, packet,
                    (rc, ledgerId, entry, addr, ctx) -> {
                        if (rc == BKException.Code.OK) {
                            written.complete(null);
                        } else {
                            written.completeExceptionally(BKException.create(rc));
                        }
                    }, null, 0, false, EnumSet.noneOf(WriteFlag.class));
            FutureUtils.result(written, TIMEOUT_SECONDS, TimeUnit.SECONDS);
        }
    }
}
