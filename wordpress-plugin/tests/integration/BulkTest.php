<?php
use VarnishEdge\Settings;

/**
 * Bulk actions over 500 posts in one request, as WordPress runs them (Posts → Bulk actions, Empty
 * Trash, deleting a user, deleting tags, an import): each produces a bounded, deduplicated set
 * of events that the purger accepts as sent (the test receiver answers 413 past the purger's
 * default limits: 1 MiB a request, 256 KiB or 1,000 keys an event, 500 events a request), and
 * names every post it changed.
 */
class BulkTest extends VE_TestCase {

	const POSTS = 500;

	/** @var array<string,mixed> Settings before the test. */
	private $saved;

	protected function setUp(): void {
		parent::setUp();
		$this->saved = get_option( Settings::OPTION );
	}

	protected function tearDown(): void {
		update_option( Settings::OPTION, $this->saved );
		parent::tearDown();
	}

	/** Posts inserted in one request (an import), then delivered and forgotten. */
	private function insert_posts( int $n, array $args = array() ): array {
		$ids = array();
		for ( $i = 0; $i < $n; $i++ ) {
			$ids[] = wp_insert_post(
				array_merge(
					array(
						'post_title'    => "Bulk $i " . wp_generate_password( 4, false ),
						'post_content'  => "<!-- wp:paragraph --><p>Bulk post $i.</p><!-- /wp:paragraph -->",
						'post_status'   => 'publish',
						'post_date'     => gmdate( 'Y-m-d H:i:s', strtotime( '2024-01-01 00:00:00' ) + $i * 3600 ),
						'post_category' => array( self::$ids['news'] ),
						'tags_input'    => array( 'bulk-' . ( $i % 5 ) ),
					),
					$args
				)
			);
		}
		return $ids;
	}

	/**
	 * Every request of the last action was accepted as sent and fits the purger's limits; the
	 * action produced at most $max_events events, whose keys are not repeated.
	 *
	 * @return array<int,array<string,mixed>> The accepted events.
	 */
	private function assert_fits_the_purger( string $action, int $max_events ): array {
		$hooks = Environment::webhooks();
		$this->assertNotEmpty( $hooks, "$action: sent" );
		foreach ( $hooks as $hook ) {
			$this->assertSame( 202, $hook['status'], "$action: every request accepted as sent (no 413, no split after the fact)" );
			$this->assertLessThanOrEqual( 1048576, strlen( json_encode( $hook['body'], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ) ), "$action: body" );
			$this->assertLessThanOrEqual( 500, count( $hook['body']['events'] ), "$action: events per request" );
		}
		$events = Environment::accepted_events();
		$this->assertLessThanOrEqual( $max_events, count( $events ), "$action: events" );
		foreach ( array( true, false ) as $soft ) {
			$tags = $this->sent_tags_list( $events, $soft );
			$this->assertSame( count( $tags ), count( array_unique( $tags ) ), "$action: each key once" );
		}
		$this->assertSame( 0, Plugin_Outbox::rows(), "$action: nothing left in the outbox" );
		$bytes = array_sum( array_map( fn( $h ) => strlen( json_encode( $h['body'], JSON_UNESCAPED_SLASHES ) ), $hooks ) );
		$keys  = array_sum( array_map( fn( $e ) => count( $e['tags'] ?? array() ), $events ) );
		$urls  = array_sum( array_map( fn( $e ) => count( $e['urls'] ?? array() ), $events ) );
		fwrite( STDOUT, sprintf( "\n  bulk: %-22s %d requests, %2d events, %5d keys, %3d URLs, %6d bytes%s", $action, count( $hooks ), count( $events ), $keys, $urls, $bytes, $this->sent_all() ? ', whole site' : '' ) );
		return $events;
	}

	private function sent_tags_list( array $events, bool $soft ): array {
		$out = array();
		foreach ( $events as $event ) {
			if ( 'tags' === $event['kind'] && $event['soft'] === $soft ) {
				$out = array_merge( $out, $event['tags'] );
			}
		}
		return $out;
	}

	/** Every post's own page key purged hard, or the whole site. */
	private function assert_posts_purged( string $action, array $posts ): void {
		if ( $this->sent_all() ) {
			return;
		}
		$missing = array_diff( array_map( fn( $id ) => $this->key( "p-$id" ), $posts ), $this->sent_tags( false ) );
		$this->assertSame( array(), array_values( $missing ), "$action: every post's page purged" );
	}

	public function test_import_bulk_edit_trash_restore_and_empty_trash_of_500_posts() {
		// The host-derived namespace can be 48 characters: the largest keys a site sends.
		update_option( Settings::OPTION, array_merge( (array) $this->saved, array( 'namespace' => str_repeat( 'n', 48 ) ) ) );
		$this->end_request(); // A new namespace purges the site once.
		Environment::clear_webhooks();
		$ns    = str_repeat( 'n', 48 );
		$posts = $this->insert_posts( self::POSTS );
		$this->end_request();
		$this->assert_fits_the_purger( 'import', 30 );
		$this->assertFalse( $this->sent_all(), 'an import of 500 posts stays precise' );
		$this->assertSame( array(), array_values( array_diff( array_map( fn( $id ) => "$ns-p-$id", $posts ), $this->sent_tags( false ) ) ), 'import: every new post\'s page (a cached 404 there)' );
		$this->assertCount( 6, preg_grep( '/-tc-\d+$/', $this->sent_tags() ), 'import: one count key per term touched (5 tags, 1 category)' );

		Environment::clear_webhooks();
		bulk_edit_posts(
			array(
				'post_type'     => 'post',
				'post'          => $posts,
				'_status'       => -1,
				'post_author'   => self::$ids['alice'],
				'post_category' => array( self::$ids['sports'] ),
				'tax_input'     => array( 'post_tag' => 'bulk-edited' ),
			)
		);
		$this->end_request();
		$this->assert_fits_the_purger( 'bulk edit', 30 );
		$this->assertGreaterThanOrEqual( self::POSTS, (int) get_term( self::$ids['sports'] )->count, 'bulk edit: the 500 posts joined Sports' );
		$this->assertContains( "$ns-tc-" . self::$ids['sports'], $this->sent_tags( true ) );
		$this->assertContains( "$ns-ul-" . self::$ids['alice'], $this->sent_tags( true ), 'bulk edit: the new author\'s archive' );
		$this->assertContains( "$ns-pa-" . $posts[0], $this->sent_tags( true ), 'bulk edit: each post\'s author shown' );

		Environment::clear_webhooks();
		foreach ( $posts as $post ) {
			wp_trash_post( $post );
		}
		$this->end_request();
		$this->assert_fits_the_purger( 'move to trash', 30 );
		$this->assertSame( array(), array_values( array_diff( array_map( fn( $id ) => "$ns-p-$id", $posts ), $this->sent_tags( false ) ) ), 'trash: every post\'s page purged hard' );
		$this->assertContains( "$ns-tc-" . self::$ids['sports'], $this->sent_tags( false ), 'trash: the category count, hard' );

		Environment::clear_webhooks();
		foreach ( $posts as $post ) {
			wp_untrash_post( $post ); // Back as drafts: nothing public changes.
		}
		$this->end_request();
		$this->assertSame( array(), array_filter( Environment::webhooks(), fn( $h ) => 202 !== $h['status'] ), 'restore: nothing refused' );

		Environment::clear_webhooks();
		foreach ( $posts as $post ) {
			wp_trash_post( $post );
		}
		$this->end_request();
		Environment::clear_webhooks();
		foreach ( $posts as $post ) {
			wp_delete_post( $post, true ); // Empty Trash.
		}
		$this->end_request();
		$this->assertSame( array(), array_filter( Environment::webhooks(), fn( $h ) => 202 !== $h['status'] ), 'empty trash: nothing refused' );
		$this->assertSame( 0, Plugin_Outbox::rows() );
		foreach ( array( 'bulk-0', 'bulk-1', 'bulk-2', 'bulk-3', 'bulk-4', 'bulk-edited' ) as $slug ) {
			wp_delete_term( get_term_by( 'slug', $slug, 'post_tag' )->term_id, 'post_tag' );
		}
		$this->end_request();
	}

	public function test_deleting_a_user_with_500_posts_reassigned_or_deleted() {
		require_once ABSPATH . 'wp-admin/includes/user.php';
		foreach ( array( 'reassign' => self::$ids['alice'], 'delete' => null ) as $how => $reassign ) {
			$user  = (int) wp_insert_user( array( 'user_login' => "bulk-$how", 'user_pass' => 'x', 'role' => 'author', 'display_name' => "Bulk $how" ) );
			$posts = $this->insert_posts( self::POSTS, array( 'post_author' => $user ) );
			$this->end_request();
			Environment::clear_webhooks();
			wp_delete_user( $user, $reassign );
			$this->end_request();
			$this->assert_fits_the_purger( "delete user ($how)", 30 );
			$this->assert_posts_purged( "delete user ($how)", $posts );
			$this->assertContains( $this->key( "ul-$user" ), $this->sent_tags( false ), "delete user ($how): their archive" );
			if ( $reassign ) {
				$this->assertContains( $this->key( "ul-$reassign" ), $this->sent_tags(), 'reassign: the new author\'s archive' );
				foreach ( $posts as $post ) {
					wp_delete_post( $post, true );
				}
				$this->end_request();
			}
		}
	}

	public function test_deleting_50_tags_of_500_posts() {
		$tags = array();
		for ( $i = 0; $i < 50; $i++ ) {
			$tags[] = wp_insert_term( "Doomed $i", 'post_tag' )['term_id'];
		}
		$posts = array();
		for ( $i = 0; $i < self::POSTS; $i++ ) {
			$posts[] = wp_insert_post( array( 'post_title' => "Tagged $i", 'post_status' => 'publish', 'post_date' => '2023-05-01 10:00:00', 'tags_input' => array( 'Doomed ' . ( $i % 50 ), 'Doomed ' . ( ( $i + 1 ) % 50 ) ) ) );
		}
		$this->end_request();
		Environment::clear_webhooks();
		foreach ( $tags as $tag ) {
			wp_delete_term( $tag, 'post_tag' );
		}
		$this->end_request();
		$this->assert_fits_the_purger( 'delete 50 tags', 30 );
		foreach ( $tags as $tag ) {
			$this->assertContains( $this->key( "t-$tag" ), $this->sent_tags( false ) );
		}
		$this->assertSame( array(), array_values( array_diff( array_map( fn( $id ) => $this->key( "pt-$id" ), $posts ), $this->sent_tags() ) ), 'each post\'s terms shown' );
		foreach ( $posts as $post ) {
			wp_delete_post( $post, true );
		}
		$this->end_request();
	}
}

/** The outbox's pending rows. */
final class Plugin_Outbox {
	public static function rows(): int {
		return \VarnishEdge\Plugin::instance()->outbox->stats()['rows'];
	}
}
