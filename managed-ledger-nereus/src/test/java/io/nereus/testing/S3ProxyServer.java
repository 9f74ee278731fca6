package io.nereus.testing;

import io.nereus.object.ObjectStoreConfig;
import io.nereus.object.S3Credentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;

/**
 * A real S3-compatible server for the S3 object store tests: S3Proxy (its {@code jar-with-dependencies}, which
 * Maven copies into {@code target/s3proxy/} and names in the {@code nereus.s3proxy.jar} system property) started
 * as a child JVM on 127.0.0.1 with the in-memory {@code transient-nio2} backend, which honours
 * {@code If-None-Match: *} atomically on puts and multipart completions. Kept off the test classpath: its
 * libraries clash with Pulsar's.
 *
 * <p>As a JUnit extension ({@code @ExtendWith(S3ProxyServer.class)}) it starts one server for the whole test run,
 * on first use, with the bucket {@value #BUCKET}, and injects it as a test or lifecycle method parameter; JUnit
 * stops it at the end of the run. Startup waits for the port to accept connections, within
 * {@link #START_TIMEOUT}; the server's output goes to {@code s3proxy.log} in its directory under target/.
 */
public final class S3ProxyServer implements BeforeAllCallback, ParameterResolver, AutoCloseable {
    public static final String JAR_PROPERTY = "nereus.s3proxy.jar";
    public static final String BUCKET = "nereus-test";
    public static final String ACCESS_KEY = "nereus-test-access-3f7a";
    public static final String SECRET_KEY = "nereus-test-secret-c41e";
    public static final String REGION = "us-east-1";
    static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(S3ProxyServer.class);

    private final Process process;
    private final URI endpoint;
    private final Path dir;
    private S3AsyncClient client;

    /** Used by JUnit as the extension; the running server is another instance, kept in the root store. */
    public S3ProxyServer() {
        this.process = null;
        this.endpoint = null;
        this.dir = null;
    }

    private S3ProxyServer(Process process, URI endpoint, Path dir) {
        this.process = process;
        this.endpoint = endpoint;
        this.dir = dir;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        server(context);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == S3ProxyServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return server(context);
    }

    private static S3ProxyServer server(ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(S3ProxyServer.class, k -> start(),
                S3ProxyServer.class);
    }

    /** The server's URL, {@code http://127.0.0.1:<port>}. */
    public URI endpoint() {
        return endpoint;
    }

    /** A store configuration for the test bucket under {@code prefix}: path-style, static keys. */
    public ObjectStoreConfig.S3 config(String prefix, long partBytes) {
        return new ObjectStoreConfig.S3(BUCKET, prefix, Optional.of(endpoint), REGION, true,
                Optional.of(new S3Credentials(ACCESS_KEY, SECRET_KEY)), partBytes);
    }

    /**
     * A plain SDK client of the server, for what the tests check behind the store's back; shared, closed with
     * the server (closing an SDK client waits out its event loop's quiet period).
     */
    public synchronized S3AsyncClient client() {
        if (client == null) {
            client = S3AsyncClient.builder().endpointOverride(endpoint).region(Region.of(REGION)).forcePathStyle(true)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY,
                            SECRET_KEY)))
                    .build();
        }
        return client;
    }

    /** Stops the server (JUnit calls this at the end of the run). */
    @Override
    public void close() {
        if (process == null) {
            return;
        }
        synchronized (this) {
            if (client != null) {
                client.close();
            }
        }
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static S3ProxyServer start() {
        String jarProperty = System.getProperty(JAR_PROPERTY, "");
        Path jar = Path.of(jarProperty);
        if (jarProperty.isEmpty() || !Files.isRegularFile(jar)) {
            throw new IllegalStateException("S3Proxy jar not found (system property " + JAR_PROPERTY + "="
                    + jarProperty + "); run the tests with Maven, whose process-test-resources phase copies it");
        }
        try {
            Path dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "s3proxy-");
            IllegalStateException failure = null;
            for (int attempt = 1; attempt <= 3; attempt++) { // the free port may be taken before S3Proxy binds it
                try {
                    S3ProxyServer server = launch(jar, dir, freePort());
                    server.createBucket();
                    return server;
                } catch (IllegalStateException e) {
                    failure = e;
                }
            }
            throw failure;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static S3ProxyServer launch(Path jar, Path dir, int port) throws IOException {
        URI endpoint = URI.create("http://127.0.0.1:" + port);
        Path properties = dir.resolve("s3proxy-" + port + ".properties");
        Files.write(properties, List.of(
                "s3proxy.endpoint=" + endpoint,
                "s3proxy.authorization=aws-v2-or-v4",
                "s3proxy.identity=" + ACCESS_KEY,
                "s3proxy.credential=" + SECRET_KEY,
                "jclouds.provider=transient-nio2",
                "jclouds.identity=" + ACCESS_KEY,
                "jclouds.credential=" + SECRET_KEY), StandardCharsets.UTF_8);
        Path log = dir.resolve("s3proxy.log");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process process = new ProcessBuilder(java.toString(), "-Xmx512m", "-jar", jar.toString(),
                "--properties", properties.toString())
                .directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (!accepts(port)) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IllegalStateException("S3Proxy did not start on port " + port + " within "
                        + START_TIMEOUT.toSeconds() + " s (exit " + (process.isAlive() ? "none" : process.exitValue())
                        + "); its output: " + tail(log));
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
                throw new IllegalStateException("interrupted while S3Proxy started", e);
            }
        }
        return new S3ProxyServer(process, endpoint, dir);
    }

    private void createBucket() {
        try {
            client().createBucket(b -> b.bucket(BUCKET)).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            close();
            throw new IllegalStateException("S3Proxy started but creating bucket " + BUCKET + " failed; its output: "
                    + tail(dir.resolve("s3proxy.log")), e);
        }
    }

    private static boolean accepts(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no output: " + e + ")";
        }
    }
}
