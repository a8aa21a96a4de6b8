// Fetches IDs from `rimeflake serve` with java.net.http.HttpClient, from many threads at once
// (HTTP/1.1 keep-alive): prints every ID.
//
// java Client.java BASE_URL THREADS REQUESTS: each thread asks /id REQUESTS times and
// /ids?n=100 once.

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public class Client {
    public static void main(String[] args) throws Exception {
        String base = args[0];
        int threads = Integer.parseInt(args[1]);
        int requests = Integer.parseInt(args[2]);
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<List<Long>>> parts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            parts.add(pool.submit(() -> {
                List<Long> ids = new ArrayList<>();
                for (int i = 0; i < requests; i++) {
                    ids.add(Long.parseLong(get(http, base + "/id").trim()));
                }
                for (String line : get(http, base + "/ids?n=100").split("\n")) {
                    ids.add(Long.parseLong(line));
                }
                return ids;
            }));
        }
        StringBuilder out = new StringBuilder();
        for (Future<List<Long>> part : parts) {
            for (long id : part.get()) {
                out.append(id).append('\n');
            }
        }
        pool.shutdown();
        System.out.print(out);
    }

    static String get(HttpClient http, String url) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(url)).GET().build();
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new RuntimeException(url + ": " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }
}
