package io.nereus.pulsar.config;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.delayed.BucketDelayedDeliveryTrackerFactory;
import org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl;
import org.junit.jupiter.api.Test;

class UnsupportedBrokerSettingsTest {

    @Test
    void requireSupported_defaults_pass() {
        assertThatCode(() -> UnsupportedBrokerSettings.requireSupported(new ServiceConfiguration()))
                .doesNotThrowAnyException();
    }

    @Test
    void requireSupported_classicKeySharedDispatcher_refusedNamingTheKeyAndTheCast() {
        ServiceConfiguration conf = new ServiceConfiguration();
        conf.setSubscriptionKeySharedUseClassicPersistentImplementation(true);

        assertThatThrownBy(() -> UnsupportedBrokerSettings.requireSupported(conf))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("subscriptionKeySharedUseClassicPersistentImplementation=true is not supported")
                .hasMessageContaining("PersistentStickyKeyDispatcherMultipleConsumersClassic")
                .hasMessageContaining("ManagedLedgerImpl");
    }

    @Test
    void requireSupported_extensibleLoadManagerAndBucketTracker_pass() {
        ServiceConfiguration conf = new ServiceConfiguration();
        conf.setLoadManagerClassName(ExtensibleLoadManagerImpl.class.getName());
        conf.setDelayedDeliveryTrackerFactoryClassName(BucketDelayedDeliveryTrackerFactory.class.getName());

        assertThatCode(() -> UnsupportedBrokerSettings.requireSupported(conf)).doesNotThrowAnyException();
    }
}
