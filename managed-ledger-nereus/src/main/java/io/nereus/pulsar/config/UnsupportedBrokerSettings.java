package io.nereus.pulsar.config;

import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;
import org.apache.pulsar.broker.ServiceConfiguration;

/**
 * Pulsar broker settings that cannot work with Nereus storage without a Pulsar fork, refused when the storage starts,
 * so that the broker stops at start with a message naming the setting and the reason instead of failing later, on
 * the first topic that takes the broken path.
 *
 * <p>Each entry names the Pulsar 4.0.8 code that makes the setting impossible. A setting belongs here only when
 * that code requires Pulsar's stock managed-ledger implementation classes for every topic, so that no routing by
 * ledger name ({@link io.nereus.pulsar.LedgerRoute}) can keep it working; features that work on Nereus (the
 * Extensible Load Manager, the bucket delayed-delivery tracker) are not listed.
 */
public final class UnsupportedBrokerSettings {

    private record Refusal(String key, Predicate<ServiceConfiguration> set, String value, String reason) {
    }

    private static final List<Refusal> REFUSED = List.of(
            new Refusal("subscriptionKeySharedUseClassicPersistentImplementation",
                    ServiceConfiguration::isSubscriptionKeySharedUseClassicPersistentImplementation, "true",
                    "Pulsar 4.0.8's classic Key_Shared dispatcher"
                            + " (PersistentStickyKeyDispatcherMultipleConsumersClassic.removeConsumersFromRecentJoinedConsumers)"
                            + " casts the subscription's managed ledger to the stock ManagedLedgerImpl, so on a Nereus topic"
                            + " a Key_Shared subscription stops dispatching as soon as a consumer joins behind"
                            + " unacknowledged messages; keep the default (false), whose Key_Shared dispatcher works"
                            + " on Nereus"));

    private UnsupportedBrokerSettings() {
    }

    /**
     * Checks {@code conf} against the settings Nereus cannot support.
     *
     * @throws IllegalArgumentException naming the first refused setting, its value and why it cannot work
     */
    public static void requireSupported(ServiceConfiguration conf) {
        Objects.requireNonNull(conf, "conf");
        for (Refusal refusal : REFUSED) {
            if (refusal.set().test(conf)) {
                throw new IllegalArgumentException(refusal.key() + "=" + refusal.value()
                        + " is not supported with Nereus storage: " + refusal.reason());
            }
        }
    }
}
