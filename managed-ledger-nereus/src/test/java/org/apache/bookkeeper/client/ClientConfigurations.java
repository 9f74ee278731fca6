package org.apache.bookkeeper.client;

import org.apache.bookkeeper.conf.ClientConfiguration;

/** The configuration a BookKeeper client was built with (package access), for tests that build a variant of it. */
public final class ClientConfigurations {
    private ClientConfigurations() {
    }

    /** A copy of {@code bk}'s configuration (its metadata service included). */
    public static ClientConfiguration copyOf(BookKeeper bk) {
        ClientConfiguration copy = new ClientConfiguration();
        copy.loadConf(bk.getConf());
        return copy;
    }
}
