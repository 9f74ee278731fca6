package io.nereus.fdb;

import com.apple.foundationdb.Database;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One user's hold on a {@link Database} opened by {@link FdbDatabases#acquire}: {@link #close()} gives the hold
 * back, and the database itself closes once no hold on it is left. An embedded database in a directory is shared by
 * every holder in the process (a directory can be open only once, as a FoundationDB cluster is one database for all
 * its clients); any other database has exactly one holder.
 *
 * <p>Thread-safe; closing is idempotent.
 */
public final class DatabaseLease implements AutoCloseable {
    private final Database database;
    private final Runnable release;
    private final AtomicBoolean closed = new AtomicBoolean();

    DatabaseLease(Database database, Runnable release) {
        this.database = Objects.requireNonNull(database, "database");
        this.release = Objects.requireNonNull(release, "release");
    }

    /** The database; do not close it directly, close the lease. */
    public Database database() {
        return database;
    }

    /** Gives this hold back; the last hold of a database closes it. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            release.run();
        }
    }
}
