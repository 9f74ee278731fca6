package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.PersistencePolicies;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The plugin's two storage classes on one broker: topics go to Nereus by default, and a namespace whose
 * persistence policy names the {@code bookkeeper} class keeps its topics on stock BookKeeper storage.
 */
class StorageClassesTest {

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker();

    private static final long FIRST_VIRTUAL_LEDGER_ID = 1L << 62;

    @Test
    void namespaceWithBookkeeperClass_keepsItsTopicsOnStockStorage_othersUseNereus() throws Exception {
        assumeTrue(BROKER.broker().storage() == StorageMode.NEREUS, "the storage classes are the plugin's");
        String stockNamespace = "public/stock-" + Long.toHexString(System.nanoTime());
        BROKER.admin().namespaces().createNamespace(stockNamespace);
        BROKER.admin().namespaces().setPersistence(stockNamespace, new PersistencePolicies(1, 1, 1, 0.0, "bookkeeper"));
        String stockTopic = "persistent://" + stockNamespace + "/t";
        String nereusTopic = SharedBroker.uniqueTopic("default-class");

        for (String topic : List.of(stockTopic, nereusTopic)) {
            try (Consumer<String> consumer = BROKER.client().newConsumer(Schema.STRING).topic(topic)
                    .subscriptionName("s").subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                    .subscribe();
                 Producer<String> producer = BROKER.client().newProducer(Schema.STRING).topic(topic).create()) {
                Messages.send(producer, "m", 3);
                assertThat(Messages.values(Messages.receive(consumer, 3)))
                        .containsExactlyElementsOf(Messages.payloads("m", 0, 3));
            }
        }

        PersistentTopicInternalStats stock = BROKER.admin().topics().getInternalStats(stockTopic);
        PersistentTopicInternalStats nereus = BROKER.admin().topics().getInternalStats(nereusTopic);
        assertThat(stock.ledgers).isNotEmpty().allSatisfy(l -> assertThat(l.ledgerId).isLessThan(FIRST_VIRTUAL_LEDGER_ID));
        assertThat(nereus.ledgers).hasSize(1)
                .allSatisfy(l -> assertThat(l.ledgerId).isGreaterThanOrEqualTo(FIRST_VIRTUAL_LEDGER_ID));
    }
}
