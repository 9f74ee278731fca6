package io.nereus.sim;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDBException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One simulated broker process's handle on the shared metadata database: after {@link #kill} it starts no
 * transaction any more (they fail with 1101 {@code operation_cancelled}), as a dead process sends nothing; a
 * transaction it had started may still commit or not, which is what "in-flight outcome unknown" means. The database
 * itself is the caller's and stays open.
 */
final class KillableDatabase {
    private static final Set<String> STARTS = Set.of("createTransaction", "run", "runAsync", "read", "readAsync");
    private static final int OPERATION_CANCELLED = 1101;

    private final Database database;
    private volatile boolean killed;

    KillableDatabase(Database target) {
        this.database = (Database) Proxy.newProxyInstance(Database.class.getClassLoader(),
                new Class<?>[] {Database.class}, (proxy, method, args) -> {
                    if (killed && STARTS.contains(method.getName())) {
                        FDBException dead = new FDBException("simulated process is dead", OPERATION_CANCELLED);
                        if (CompletableFuture.class.isAssignableFrom(method.getReturnType())) {
                            return CompletableFuture.failedFuture(dead);
                        }
                        throw dead;
                    }
                    if (method.getName().equals("close")) {
                        return null; // the database belongs to the simulation, not to the process
                    }
                    try {
                        return method.invoke(target, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    Database database() {
        return database;
    }

    void kill() {
        killed = true;
    }
}
