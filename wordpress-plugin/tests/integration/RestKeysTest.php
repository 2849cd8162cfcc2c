<?php
/**
 * What anonymous REST responses carry (keys and the long TTL), and what comment, term and user
 * changes made from code purge of them.
 */
class RestKeysTest extends VE_TestCase {

	private function fetch_keys( string $path ): array {
		$r = Environment::fetch( $path );
		$this->assertSame( 200, $r['status'], "$path: " . substr( $r['body'], 0, 200 ) );
		return $r;
	}

	private function comment_on( int $post_id, string $text ): int {
		$id = wp_insert_comment( array( 'comment_post_ID' => $post_id, 'comment_content' => $text, 'comment_author' => 'Reader', 'comment_author_email' => 'reader@example.com', 'comment_approved' => 1 ) );
		$this->end_request();
		Environment::clear_webhooks();
		return $id;
	}

	public function test_comment_item_and_collections_carry_the_keys_comment_changes_purge() {
		$post    = self::$ids['bravo'];
		$comment = $this->comment_on( $post, 'A comment for the REST API' );

		$item = $this->fetch_keys( '/wp-json/wp/v2/comments/' . $comment );
		$this->assertContains( $this->key( 'c-' . $post ), Environment::keys_of( $item ) );
		$this->assertSame( array( 'max-age=86400' ), $item['headers']['surrogate-control'] );
		$this->assertContains( $this->key( 'comments' ), Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/comments' ) ) );
		$of_post = Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/comments?post=' . $post ) );
		$this->assertContains( $this->key( 'c-' . $post ), $of_post );
		$this->assertNotContains( $this->key( 'comments' ), $of_post, 'a post\'s comments do not change with other posts\' comments' );

		// Deleted from code: the item, the post's listings and the site-wide ones, hard.
		wp_delete_comment( $comment, true );
		$this->end_request();
		$this->assertContains( $this->key( 'c-' . $post ), $this->sent_tags( false ) );
		$this->assertContains( $this->key( 'comments' ), $this->sent_tags( false ) );
		$after = Environment::fetch( '/wp-json/wp/v2/comments/' . $comment );
		$this->assertSame( 404, $after['status'] );
		$this->assertArrayNotHasKey( 'surrogate-control', $after['headers'], 'the 404 is not kept for a day' );
	}

	public function test_comment_edit_trash_and_spam_purge_hard_and_leave_other_posts_alone() {
		$post    = self::$ids['bravo'];
		$comment = $this->comment_on( $post, 'Text to correct' );
		foreach ( array(
			'edit'  => static function () use ( $comment ) {
				wp_update_comment( array( 'comment_ID' => $comment, 'comment_content' => 'Corrected text' ) );
			},
			'trash' => static function () use ( $comment ) {
				wp_trash_comment( $comment );
			},
			'restore' => static function () use ( $comment ) {
				wp_untrash_comment( $comment );
			},
			'spam'  => static function () use ( $comment ) {
				wp_spam_comment( $comment );
			},
		) as $what => $change ) {
			Environment::clear_webhooks();
			$change();
			$this->end_request();
			$hard = 'restore' !== $what;
			$this->assertContains( $this->key( 'c-' . $post ), $this->sent_tags( ! $hard ), "comment $what" );
			$this->assertNotContains( $this->key( 'c-' . self::$ids['charlie'] ), $this->sent_tags(), "comment $what: another post's comments" );
			$this->assertNotContains( $this->key( 'r-p-' . $post ), $this->sent_tags(), "comment $what: the post's REST item shows no comment" );
		}
		wp_delete_comment( $comment, true );
	}

	public function test_a_comment_moved_to_another_post_leaves_the_old_posts_responses() {
		$comment = $this->comment_on( self::$ids['bravo'], 'Posted under the wrong post' );
		wp_update_comment( array( 'comment_ID' => $comment, 'comment_post_ID' => self::$ids['charlie'] ) );
		$this->end_request();
		$this->assertContains( $this->key( 'c-' . self::$ids['bravo'] ), $this->sent_tags( false ) );
		$this->assertContains( $this->key( 'c-' . self::$ids['charlie'] ), $this->sent_tags( false ) );
		wp_delete_comment( $comment, true );
	}

	public function test_embedded_responses_keys_reach_the_headers() {
		$keys = Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/posts/' . self::$ids['bravo'] . '?_embed' ) );
		$this->assertContains( $this->key( 'r-p-' . self::$ids['bravo'] ), $keys );
		$this->assertContains( $this->key( 'r-u-' . (int) get_post_field( 'post_author', self::$ids['bravo'] ) ), $keys, 'the embedded author' );
		$this->assertContains( $this->key( 'pt-' . self::$ids['bravo'] ), $keys, 'the embedded terms of the post' );
		$this->assertContains( $this->key( 'c-' . self::$ids['bravo'] ), $keys, 'the embedded replies' );
	}

	public function test_filtered_collections_get_the_query_key_and_unknown_routes_no_long_ttl() {
		$keys = Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/posts?categories=' . self::$ids['sports'] ) );
		$this->assertContains( $this->key( 'r-q-posts' ), $keys );
		$this->assertNotContains( $this->key( 'r-c-posts' ), $keys );
		$this->assertContains( $this->key( 'r-c-posts' ), Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/posts?per_page=5&page=1' ) ) );
		$this->assertContains( $this->key( 'r-q-tags' ), Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/tags?orderby=count' ) ) );
		$this->assertContains( $this->key( 'r-c-users' ), Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/users' ) ) );
		$this->assertContains( $this->key( 'search' ), Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/search?search=story' ) ) );
		$this->assertContains( $this->key( 'r-c-types' ), Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/types/post' ) ) );

		// The fixture mu-plugin's own route shows a post, but nothing here knows what else.
		$other = $this->fetch_keys( '/wp-json/ve-fixture/v1/post/' . self::$ids['bravo'] );
		$this->assertContains( $this->key( 'r-p-' . self::$ids['bravo'] ), Environment::keys_of( $other ) );
		$this->assertArrayNotHasKey( 'surrogate-control', $other['headers'], 'an unknown route stays on the microcache' );
	}

	public function test_custom_post_types_and_taxonomies_under_their_own_rest_bases() {
		$genre = wp_insert_term( 'Mystery', 've_genre' )['term_id'];
		$book  = wp_insert_post( array( 'post_type' => 've_book', 'post_status' => 'publish', 'post_title' => 'A REST book' ) );
		wp_set_object_terms( $book, array( $genre ), 've_genre' );
		$this->end_request();
		$list = Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/books' ) );
		$this->assertContains( $this->key( 'r-c-books' ), $list );
		$this->assertContains( $this->key( "r-p-$book" ), $list );
		$this->assertContains( $this->key( 'r-q-books' ), Environment::keys_of( $this->fetch_keys( "/wp-json/wp/v2/books?genres=$genre" ) ) );
		$this->assertContains( $this->key( "r-t-$genre" ), Environment::keys_of( $this->fetch_keys( '/wp-json/wp/v2/genres' ) ) );

		Environment::clear_webhooks();
		wp_trash_post( $book );
		$this->end_request();
		foreach ( array( "r-p-$book", 'r-c-books', 'r-q-books', "tc-$genre", 'r-q-genres' ) as $key ) {
			$this->assertContains( $this->key( $key ), $this->sent_tags( false ), "$key purged hard when the book is trashed" );
		}
		wp_delete_post( $book, true );
		wp_delete_term( $genre, 've_genre' );
		$this->end_request();
	}

	public function test_deleting_a_tag_purges_the_rest_items_of_its_posts() {
		$post = self::$ids['bravo'];
		$tag  = wp_insert_term( 'Short-lived', 'post_tag' )['term_id'];
		wp_set_post_tags( $post, array( 'Short-lived' ), true );
		$this->end_request();
		Environment::clear_webhooks();
		wp_delete_term( $tag, 'post_tag' );
		$this->end_request();
		$this->assertContains( $this->key( 'r-p-' . $post ), $this->sent_tags(), 'the post\'s REST item lists the tag id' );
		$this->assertContains( $this->key( 'pt-' . $post ), $this->sent_tags() );
		$this->assertContains( $this->key( 'r-t-' . $tag ), $this->sent_tags( false ) );
	}

	public function test_moving_a_post_between_categories_purges_both_archives() {
		$post = self::$ids['bravo'];
		$was  = wp_get_post_categories( $post );
		$to   = in_array( self::$ids['news'], $was, true ) ? self::$ids['sports'] : self::$ids['news'];
		wp_set_post_categories( $post, array( $to ) );
		$this->end_request();
		$sent = $this->sent_tags();
		wp_set_post_categories( $post, $was );
		$this->end_request();
		$this->assertNotContains( $to, $was );
		foreach ( array_merge( $was, array( $to ) ) as $term ) {
			$this->assertContains( $this->key( 'tl-' . $term ), $sent, "archive of term $term" );
		}
	}

	public function test_a_deleted_user_is_purged_hard_with_the_posts_given_to_another_author() {
		require_once ABSPATH . 'wp-admin/includes/user.php';
		$user = wp_insert_user( array( 'user_login' => 'leaving', 'user_pass' => wp_generate_password(), 'display_name' => 'Leaving Author', 'role' => 'author' ) );
		$post = wp_insert_post( array( 'post_status' => 'publish', 'post_title' => 'Written by someone leaving', 'post_author' => $user ) );
		$this->end_request();
		Environment::clear_webhooks();
		wp_delete_user( $user, 1 );
		$this->end_request();
		foreach ( array( "r-u-$user", "u-$user", 'r-c-users', "r-p-$post", "p-$post", "pa-$post" ) as $key ) {
			$this->assertContains( $this->key( $key ), $this->sent_tags( false ), "$key purged hard" );
		}
		$this->assertSame( 1, (int) get_post_field( 'post_author', $post ) );
		wp_delete_post( $post, true );
		$this->end_request();
	}

	public function test_author_slug_change_purges_both_addresses_with_their_feeds() {
		$user = self::$ids['alice'];
		$old  = get_author_posts_url( $user );
		wp_update_user( array( 'ID' => $user, 'user_nicename' => 'alice-renamed' ) );
		$this->end_request();
		$new      = get_author_posts_url( $user );
		$prefixes = $this->sent_urls( 'prefix' );
		wp_update_user( array( 'ID' => $user, 'user_nicename' => 'alice' ) );
		$this->end_request();
		$this->assertNotSame( $old, $new );
		$this->assertContains( $old, $prefixes );
		$this->assertContains( $new, $prefixes, 'an unknown author\'s empty feed may be cached at the new address' );
	}
}
