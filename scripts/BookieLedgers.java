import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Prints how many ledgers the standalone's bookie knows and the highest ledger id ("count max", "0 -" when none),
 * from the bookie's admin API on the loopback interface (its ledger manager over the standalone's metadata store,
 * which no second process can open). Used by scripts/space-soak:
 *
 *   java scripts/BookieLedgers.java <bookie admin port>
 *
 * Exits 1, printing the reason to stderr, when the bookie does not answer.
 */
public final class BookieLedgers {
    private static final Pattern LEDGER = Pattern.compile("\"(\\d+)\"\\s*:");

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].matches("\\d{1,5}")) {
            System.err.println("usage: java BookieLedgers.java <bookie admin port>");
            System.exit(2);
        }
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        URI uri = new URI("http", null, "127.0.0.1", Integer.parseInt(args[0]), "/api/v1/ledger/list/", null, null);
        HttpResponse<String> r;
        try {
            r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            System.err.println("the bookie's admin API on port " + args[0] + " does not answer: " + e);
            System.exit(1);
            return;
        }
        if (r.statusCode() != 200) {
            System.err.println("the bookie's admin API answered " + r.statusCode());
            System.exit(1);
        }
        long n = 0;
        long max = -1;
        Matcher m = LEDGER.matcher(r.body());
        while (m.find()) {
            n++;
            max = Math.max(max, Long.parseLong(m.group(1)));
        }
        System.out.println(n == 0 ? "0 -" : n + " " + max);
    }
}
