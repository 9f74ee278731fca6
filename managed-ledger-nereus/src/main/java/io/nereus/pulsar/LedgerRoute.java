package io.nereus.pulsar;

import org.apache.pulsar.common.naming.NamespaceName;
import org.apache.pulsar.common.naming.TopicDomain;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.transaction.coordinator.impl.MLTransactionLogImpl;

/**
 * Which factory stores a managed ledger of the {@value NereusManagedLedgerStorage#NEREUS} storage class, decided by
 * the ledger's name alone, so that every factory call about one name (open, read-only open, exists, delete, info,
 * properties, the list of open ledgers, offline backlog) reaches the same storage.
 *
 * <p>The rule: a ledger goes to Pulsar's stock factory when Pulsar's own code requires a stock
 * {@code ManagedLedgerImpl} for it; everything else goes to Nereus. Pulsar 4.0.8 has one such ledger kind (a scan of
 * the broker and transaction-coordinator jars for casts to the managed-ledger implementation classes finds no
 * other that is tied to a ledger name): the transaction coordinator's log,
 * {@code persistent://pulsar/system/__transaction_log_<coordinator id>} (ledger name
 * {@code pulsar/system/persistent/__transaction_log_<id>}), whose {@code MLTransactionLogImpl} casts its ledger to
 * {@code ManagedLedgerImpl} to borrow its executor. The transaction buffer inside user topics, the pending-ack
 * stores ({@code <topic>-<subscription>__transaction_pending_ack}) and the transaction-buffer snapshot topics use
 * only the {@code ManagedLedger} interface and stay on Nereus.
 */
public enum LedgerRoute {
    /** Stored by Nereus: a stream per ledger. */
    NEREUS,
    /** Stored by Pulsar's stock BookKeeper factory, because Pulsar casts the ledger to its implementation class. */
    STOCK;

    /** Ledger-name prefix of the transaction coordinator logs; the coordinator id follows. */
    static final String TRANSACTION_LOG_PREFIX = TopicName.get(TopicDomain.persistent.value(),
            NamespaceName.SYSTEM_NAMESPACE, MLTransactionLogImpl.TRANSACTION_LOG_PREFIX).getPersistenceNamingEncoding();

    /** The route of the managed ledger named {@code ledgerName} (Pulsar's persistence naming of a topic). */
    public static LedgerRoute of(String ledgerName) {
        return isTransactionLog(ledgerName) ? STOCK : NEREUS;
    }

    private static boolean isTransactionLog(String name) {
        if (!name.startsWith(TRANSACTION_LOG_PREFIX) || name.length() == TRANSACTION_LOG_PREFIX.length()) {
            return false;
        }
        for (int i = TRANSACTION_LOG_PREFIX.length(); i < name.length(); i++) {
            if (name.charAt(i) < '0' || name.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
