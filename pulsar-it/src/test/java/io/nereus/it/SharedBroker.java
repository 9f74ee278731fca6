package io.nereus.it;

import java.util.UUID;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension: one {@link StandaloneBroker} for all tests of a class, started before the first and closed
 * after the last, with one client and one admin shared by the tests. Register it as a static field:
 * {@code @RegisterExtension static final SharedBroker BROKER = new SharedBroker();}.
 */
public final class SharedBroker implements BeforeAllCallback, AfterAllCallback {

    private final java.util.function.Consumer<org.apache.pulsar.broker.ServiceConfiguration> customize;
    private StandaloneBroker broker;

    /** A broker with the harness's settings. */
    public SharedBroker() {
        this(conf -> { });
    }

    /** A broker whose settings {@code customize} changes after the harness's own. */
    public SharedBroker(java.util.function.Consumer<org.apache.pulsar.broker.ServiceConfiguration> customize) {
        this.customize = customize;
    }
    private PulsarClient client;
    private PulsarAdmin admin;

    @Override
    public void beforeAll(ExtensionContext context) {
        broker = StandaloneBroker.start(context.getRequiredTestClass().getSimpleName(), customize);
        client = broker.newClient();
        admin = broker.newAdmin();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (broker != null) {
            broker.close();
            broker = null;
            client = null;
            admin = null;
        }
    }

    /** The running broker. */
    public StandaloneBroker broker() {
        if (broker == null) {
            throw new IllegalStateException("SharedBroker is used outside its test class (register it static)");
        }
        return broker;
    }

    /** The client shared by the tests of the class. */
    public PulsarClient client() {
        broker();
        return client;
    }

    /** The admin shared by the tests of the class. */
    public PulsarAdmin admin() {
        broker();
        return admin;
    }

    /** A fresh persistent topic name in {@code public/default}, unique within the broker's lifetime. */
    public static String uniqueTopic(String prefix) {
        return "persistent://public/default/" + prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
