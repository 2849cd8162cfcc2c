<?php
// One content change made from PHP with WordPress's own functions, as plugins, cron jobs and
// WP-CLI make them (no admin screen, no REST request): php stack/wp/change.php KIND ARG...
// The plugin's invalidations go out at shutdown, as after any request. Prints what it did; for
// the kinds that create something, its id on the last line.
require __DIR__ . '/bootstrap.php';

$kinds = array(
    // A shop changing the stock when an order comes in.
    'meta'           => array('POST_ID KEY VALUE', static function ($id, $key, $value) {
        update_post_meta((int) $id, $key, $value);
        return "meta $key of post $id set";
    }),
    'comment-insert' => array('POST_ID TEXT', static function ($post_id, $text) {
        $id = wp_insert_comment(array('comment_post_ID' => (int) $post_id, 'comment_content' => $text, 'comment_author' => 'PHP visitor', 'comment_author_email' => 'visitor@example.com', 'comment_approved' => 1));
        return $id ? "comment inserted\n$id" : null;
    }),
    // approve, hold, spam or trash, as wp_set_comment_status() takes them.
    'comment-status' => array('COMMENT_ID STATUS', static function ($id, $status) {
        return true === wp_set_comment_status((int) $id, $status) ? "comment $id: $status" : null;
    }),
    'comment-delete' => array('COMMENT_ID', static function ($id) {
        return wp_delete_comment((int) $id, true) ? "comment $id deleted" : null;
    }),
    'term-delete'    => array('TERM_ID TAXONOMY', static function ($id, $taxonomy) {
        return true === wp_delete_term((int) $id, $taxonomy) ? "term $id deleted" : null;
    }),
    // display_name, user_nicename (the author slug), description, user_url.
    'user-update'    => array('USER_ID FIELD VALUE', static function ($id, $field, $value) {
        $result = wp_update_user(array('ID' => (int) $id, $field => $value));
        return is_wp_error($result) ? null : "user $id: $field set";
    }),
);

$kind = $argv[1] ?? '';
if (!isset($kinds[$kind]) || count($argv) - 2 !== count(explode(' ', $kinds[$kind][0]))) {
    fwrite(STDERR, "usage: change.php KIND ARG...\n");
    foreach ($kinds as $name => [$args]) {
        fwrite(STDERR, "  $name $args\n");
    }
    exit(2);
}
$done = $kinds[$kind][1](...array_slice($argv, 2));
if (null === $done) {
    fwrite(STDERR, "change.php $kind " . implode(' ', array_slice($argv, 2)) . ": WordPress refused it\n");
    exit(1);
}
echo $done, "\n";
