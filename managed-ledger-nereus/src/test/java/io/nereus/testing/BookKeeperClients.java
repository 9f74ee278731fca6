package io.nereus.testing;

import org.apache.bookkeeper.client.BookKeeper;

/** An in-process BookKeeper that tests get clients of; each client is closed with the cluster. */
public interface BookKeeperClients {
    /** A new BookKeeper client of this cluster. */
    BookKeeper newClient();
}
