package io.nereus.testing;

import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.apache.bookkeeper.common.concurrent.FutureUtils;

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
}
