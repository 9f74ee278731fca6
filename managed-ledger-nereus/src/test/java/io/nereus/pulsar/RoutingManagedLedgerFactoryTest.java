package io.nereus.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.PersistentOfflineTopicStats;
import org.junit.jupiter.api.Test;

class RoutingManagedLedgerFactoryTest {
    private static final String TXN_LOG = "pulsar/system/persistent/__transaction_log_3";
    private static final String USER = "public/default/persistent/orders";

    /** A factory that records the calls it gets ("method name") and answers them with nulls or fixed values. */
    private static final class Recording {
        final List<String> calls = new ArrayList<>();
        final Map<String, ManagedLedger> open;
        final ManagedLedgerFactory factory;

        Recording(Map<String, ManagedLedger> open) {
            this.open = open;
            this.factory = (ManagedLedgerFactory) Proxy.newProxyInstance(getClass().getClassLoader(),
                    new Class<?>[] {ManagedLedgerFactory.class}, (proxy, m, args) -> answer(m, args));
        }

        private Object answer(Method m, Object[] args) {
            String name = args != null && args.length > 0 && args[0] instanceof String s ? s
                    : args != null && args.length > 1 && args[1] instanceof TopicName t
                            ? t.getPersistenceNamingEncoding() : "";
            calls.add(m.getName() + " " + name);
            if (m.getName().equals("getManagedLedgers")) {
                return open;
            }
            if (m.getReturnType() == CompletableFuture.class) {
                return CompletableFuture.completedFuture(null);
            }
            return m.getReturnType() == long.class ? 0L : null;
        }
    }

    private final Recording nereus = new Recording(Map.of(USER, ledger(), "pulsar/system/persistent/__transaction_log_7", ledger()));
    private final Recording stock = new Recording(Map.of(TXN_LOG, ledger(), "public/bk/persistent/kept-on-bk",
            ledger()));
    private final RoutingManagedLedgerFactory routing = new RoutingManagedLedgerFactory(nereus.factory,
            stock.factory);

    private static ManagedLedger ledger() {
        return (ManagedLedger) Proxy.newProxyInstance(RoutingManagedLedgerFactoryTest.class.getClassLoader(),
                new Class<?>[] {ManagedLedger.class}, (p, m, a) -> m.getName().equals("toString") ? "ledger" : null);
    }

    /** Calls every method of the factory that takes a ledger name, with {@code name}. */
    private void callEveryNamedMethod(String name) throws Exception {
        routing.open(name);
        routing.open(name, null);
        routing.asyncOpen(name, null, null);
        routing.asyncOpen(name, null, null, null, null);
        routing.openReadOnlyCursor(name, null, null);
        routing.asyncOpenReadOnlyCursor(name, null, null, null, null);
        routing.asyncOpenReadOnlyManagedLedger(name, null, null, null);
        routing.getManagedLedgerInfo(name);
        routing.asyncGetManagedLedgerInfo(name, null, null);
        routing.delete(name);
        routing.delete(name, null);
        routing.asyncDelete(name, null, null);
        routing.asyncDelete(name, null, null, null);
        routing.asyncExists(name);
        routing.getManagedLedgerPropertiesAsync(name);
        String[] parts = name.split("/");
        routing.estimateUnloadedTopicBacklog(new PersistentOfflineTopicStats(name, "b"),
                TopicName.get(parts[2], parts[0], parts[1], parts[3]), false, null);
    }

    /** Every method of ManagedLedgerFactory that is about one ledger (its name or topic). */
    private static long namedMethods() {
        return Arrays.stream(ManagedLedgerFactory.class.getMethods()).filter(m -> m.getParameterCount() > 0
                && (m.getParameterTypes()[0] == String.class
                        || (m.getParameterCount() > 1 && m.getParameterTypes()[1] == TopicName.class))).count();
    }

    @Test
    void everyNamedCall_forTheTransactionLog_reachesOnlyTheStockFactory() throws Exception {
        callEveryNamedMethod(TXN_LOG);
        assertThat(nereus.calls).isEmpty();
        assertThat(stock.calls).hasSize((int) namedMethods()).allMatch(c -> c.endsWith(" " + TXN_LOG));
    }

    @Test
    void everyNamedCall_forAUserTopic_reachesOnlyNereus() throws Exception {
        callEveryNamedMethod(USER);
        assertThat(stock.calls).isEmpty();
        assertThat(nereus.calls).hasSize((int) namedMethods()).allMatch(c -> c.endsWith(" " + USER));
    }

    @Test
    void getManagedLedgers_listsEachLedgerFromTheFactoryItsNameRoutesTo() {
        assertThat(routing.getManagedLedgers()).containsOnlyKeys(USER, TXN_LOG);
        assertThat(routing.getManagedLedgers().get(TXN_LOG)).isSameAs(stock.open.get(TXN_LOG));
    }

    @Test
    void factoryWideCalls_andShutdown_areNereus() throws Exception {
        routing.getCacheStats();
        routing.getEntryCacheManager();
        routing.getConfig();
        routing.updateCacheEvictionTimeThreshold(5);
        routing.getCacheEvictionTimeThreshold();
        routing.shutdownAsync();
        routing.shutdown();
        assertThat(stock.calls).isEmpty();
        assertThat(nereus.calls).hasSize(7);
    }
}
