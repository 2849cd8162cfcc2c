<?php
// Sets one post meta value outside any save, as a shop does when an order changes the stock:
// php stack/wp/set-meta.php POST_ID KEY VALUE. The plugin's invalidations go out at shutdown.
require __DIR__ . '/bootstrap.php';
[, $id, $key, $value] = $argv + array(null, null, null, null);
if (!ctype_digit((string) $id) || '' === (string) $key || null === $value) {
    fwrite(STDERR, "usage: set-meta.php POST_ID KEY VALUE\n");
    exit(2);
}
if (!get_post((int) $id)) {
    fwrite(STDERR, "no post $id\n");
    exit(1);
}
update_post_meta((int) $id, $key, $value);
echo "meta $key of post $id set\n";
