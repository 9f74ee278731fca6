package io.nereus.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.pulsar.broker.transaction.pendingack.impl.MLPendingAckStore;
import org.apache.pulsar.common.naming.SystemTopicNames;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.transaction.coordinator.TransactionCoordinatorID;
import org.apache.pulsar.transaction.coordinator.impl.MLTransactionLogImpl;
import org.junit.jupiter.api.Test;

class LedgerRouteTest {

    private static String ledgerName(String topic) {
        return TopicName.get(topic).getPersistenceNamingEncoding();
    }

    @Test
    void of_transactionCoordinatorLogs_goToStock() {
        for (long tc : new long[] {0, 1, 15, 1234567}) {
            String name = MLTransactionLogImpl.getMLTransactionLogName(new TransactionCoordinatorID(tc))
                    .getPersistenceNamingEncoding();
            assertThat(LedgerRoute.of(name)).as(name).isEqualTo(LedgerRoute.STOCK);
        }
        assertThat(LedgerRoute.of("pulsar/system/persistent/__transaction_log_0")).isEqualTo(LedgerRoute.STOCK);
    }

    @Test
    void of_userTopicsAndTheirTransactionLedgers_stayOnNereus() {
        String topic = "persistent://public/default/orders";
        assertThat(LedgerRoute.of(ledgerName(topic))).isEqualTo(LedgerRoute.NEREUS);
        assertThat(LedgerRoute.of(ledgerName(MLPendingAckStore.getTransactionPendingAckStoreSuffix(topic, "sub"))))
                .as("pending-ack store").isEqualTo(LedgerRoute.NEREUS);
        for (String system : new String[] {SystemTopicNames.TRANSACTION_BUFFER_SNAPSHOT,
                SystemTopicNames.TRANSACTION_BUFFER_SNAPSHOT_SEGMENTS,
                SystemTopicNames.TRANSACTION_BUFFER_SNAPSHOT_INDEXES, SystemTopicNames.NAMESPACE_EVENTS_LOCAL_NAME}) {
            assertThat(LedgerRoute.of(ledgerName("persistent://public/default/" + system))).as(system)
                    .isEqualTo(LedgerRoute.NEREUS);
        }
        assertThat(LedgerRoute.of(ledgerName("persistent://pulsar/system/transaction_coordinator_assign-partition-0")))
                .as("the coordinator assignment topic").isEqualTo(LedgerRoute.NEREUS);
    }

    @Test
    void of_lookAlikes_stayOnNereus() {
        assertThat(LedgerRoute.of("pulsar/system/persistent/__transaction_log_")).isEqualTo(LedgerRoute.NEREUS);
        assertThat(LedgerRoute.of("pulsar/system/persistent/__transaction_log_0x")).isEqualTo(LedgerRoute.NEREUS);
        assertThat(LedgerRoute.of("pulsar/system/persistent/__transaction_log_0-partition-1"))
                .isEqualTo(LedgerRoute.NEREUS);
        assertThat(LedgerRoute.of("public/default/persistent/__transaction_log_0")).as("another namespace")
                .isEqualTo(LedgerRoute.NEREUS);
        assertThat(LedgerRoute.of("pulsar/system/non-persistent/__transaction_log_0")).isEqualTo(LedgerRoute.NEREUS);
    }
}
