<?php
use VarnishEdge\Plugin;

/**
 * Real edits in WordPress produce exactly the expected signed webhooks at the receiver.
 */
class EventsTest extends VE_TestCase {

	public function test_body_update_purges_own_page_and_listings_showing_it_but_not_siblings(): void {
		$id = self::$ids['charlie'];
		wp_update_post( array( 'ID' => $id, 'post_content' => 'Charlie, rewritten ' . microtime( true ) ) );
		$this->end_request();

		$hooks = Environment::webhooks();
		$this->assertCount( 1, $hooks, 'one webhook per request' );
		$this->assertTrue( $hooks[0]['signature_ok'] );
		$this->assertSame( 202, $hooks[0]['status'] );
		$this->assertSame( Environment::site(), $hooks[0]['body']['site'] );

		$hard = $this->sent_tags( false );
		$soft = $this->sent_tags( true );
		$this->assertContains( $this->key( "p-$id" ), $hard );
		$this->assertContains( $this->key( "r-p-$id" ), $hard );
		// The old words are gone: a removal, hard everywhere (RedactionTest covers soft vs hard).
		$this->assertContains( $this->key( "pl-$id" ), $hard );
		$this->assertContains( $this->key( 'search' ), $hard );
		$this->assertContains( get_permalink( $id ), $this->sent_urls() );
		foreach ( array( 'tl-' . self::$ids['sports'], 'home', 'ul-1', 'p-' . self::$ids['delta'], 't-' . self::$ids['sports'] ) as $suffix ) {
			$this->assertNotContains( $this->key( $suffix ), array_merge( $hard, $soft ), "$suffix must not be purged by a body edit" );
		}
	}

	public function test_slug_change_purges_old_permalink(): void {
		$id  = $this->new_post( array( 'post_name' => 'old-slug', 'post_date' => '2025-03-03 10:00:00' ) );
		$old = get_permalink( $id );
		wp_update_post( array( 'ID' => $id, 'post_name' => 'new-slug' ) );
		$this->end_request();
		$urls = $this->sent_urls();
		$this->assertContains( $old, $urls );
		$this->assertContains( get_permalink( $id ), $urls );
		$this->assertStringContainsString( '/new-slug/', get_permalink( $id ) );
		$this->assertContains( $this->key( "pn-$id" ), $this->sent_tags( true ) );
	}

	public function test_parent_page_slug_change_purges_children_by_prefix(): void {
		$parent = $this->new_post( array( 'post_type' => 'page', 'post_name' => 'parent-page' ) );
		$child  = $this->new_post( array( 'post_type' => 'page', 'post_name' => 'child-page', 'post_parent' => $parent ) );
		$this->assertSame( home_url( '/parent-page/child-page/' ), get_permalink( $child ) );
		wp_update_post( array( 'ID' => $parent, 'post_name' => 'moved-page' ) );
		$this->end_request();
		$this->assertContains( home_url( '/parent-page/' ), $this->sent_urls( 'prefix' ) );
		$this->assertContains( $this->key( 'pages' ), $this->sent_tags( true ) );
		wp_delete_post( $child, true );
		wp_delete_post( $parent, true );
		$this->end_request();
	}

	public function test_publish_enters_listings_and_drops_404_at_new_url(): void {
		$id = wp_insert_post( array( 'post_title' => 'Fresh', 'post_name' => 'fresh', 'post_status' => 'draft', 'post_category' => array( self::$ids['sports'] ), 'post_date' => '2025-09-09 09:00:00' ) );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks(), 'saving a draft purges nothing' );

		wp_update_post( array( 'ID' => $id, 'post_status' => 'publish' ) );
		$this->end_request();
		$soft = $this->sent_tags( true );
		// A draft with a floating date is published "now".
		$date = get_post( $id )->post_date;
		$ymd  = substr( str_replace( '-', '', $date ), 0, 8 );
		foreach ( array( 'home', 'tl-' . self::$ids['sports'], 'ul-1', 'date-' . substr( $ymd, 0, 4 ), 'date-' . substr( $ymd, 0, 6 ), 'date-' . $ymd, 'r-c-posts', 'search' ) as $suffix ) {
			$this->assertContains( $this->key( $suffix ), $soft, $suffix );
		}
		$this->assertContains( home_url( '/' . substr( $ymd, 0, 4 ) . '/' . substr( $ymd, 4, 2 ) . '/fresh/' ), $this->sent_urls() );
		$this->assertContains( $this->key( "p-$id" ), $this->sent_tags( false ) );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_unpublish_purges_public_url_not_query_form(): void {
		$id  = $this->new_post( array( 'post_name' => 'leaving', 'post_category' => array( self::$ids['news'] ) ) );
		$url = get_permalink( $id );
		wp_update_post( array( 'ID' => $id, 'post_status' => 'draft' ) );
		$this->end_request();
		$urls = $this->sent_urls();
		$this->assertContains( $url, $urls );
		foreach ( $urls as $u ) {
			$this->assertStringNotContainsString( '?p=', $u );
		}
		$hard = $this->sent_tags( false );
		foreach ( array( "p-$id", "pl-$id", "pn-$id", 'home', 'tl-' . self::$ids['news'], 'ul-1', 'date-202506' ) as $suffix ) {
			$this->assertContains( $this->key( $suffix ), $hard, $suffix );
		}
	}

	public function test_trash_and_delete_purge_the_old_url(): void {
		$id  = $this->new_post( array( 'post_name' => 'trashme' ) );
		$url = get_permalink( $id );
		wp_trash_post( $id );
		$this->end_request();
		$this->assertContains( $url, $this->sent_urls() );
		$this->assertContains( $this->key( "pl-$id" ), $this->sent_tags( false ) );

		$id2  = $this->new_post( array( 'post_name' => 'deleteme' ) );
		$url2 = get_permalink( $id2 );
		wp_delete_post( $id2, true );
		$this->end_request();
		$this->assertContains( $url2, $this->sent_urls() );
		$this->assertContains( $this->key( "p-$id2" ), $this->sent_tags( false ) );
	}

	public function test_scheduled_post_going_live_is_purged(): void {
		$when = gmdate( 'Y-m-d H:i:s', time() + 3600 );
		$id   = wp_insert_post( array( 'post_title' => 'Later', 'post_name' => 'later', 'post_status' => 'future', 'post_date' => $when, 'post_date_gmt' => $when ) );
		$this->end_request();
		$this->assertSame( 'future', get_post_status( $id ) );
		$this->assertSame( array(), Environment::webhooks(), 'scheduling purges nothing' );

		// What WP-Cron runs at the scheduled time.
		wp_publish_post( $id );
		$this->end_request();
		$this->assertSame( 'publish', get_post_status( $id ) );
		$this->assertContains( $this->key( 'home' ), $this->sent_tags( true ) );
		$this->assertContains( get_permalink( $id ), $this->sent_urls() );
		$this->assertStringContainsString( '/later/', get_permalink( $id ) );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	/**
	 * WP-Cron runs every due event of a run before its shutdown: a scheduled post's listings must
	 * not wait for the events after it (the e2e stale-page audit on the compose stack: a category
	 * listing and its feed kept without the post that went live, while `do_pings` waited on DNS).
	 */
	public function test_scheduled_post_going_live_in_a_cron_run_is_delivered_before_the_rest_of_the_run(): void {
		$when = gmdate( 'Y-m-d H:i:s', time() + 3600 );
		$id   = wp_insert_post( array( 'post_title' => 'Cron later', 'post_name' => 'cron-later', 'post_status' => 'future', 'post_date' => $when, 'post_date_gmt' => $when, 'post_category' => array( self::$ids['sports'] ) ) );
		$this->end_request();
		// The scheduled time has come.
		global $wpdb;
		$past = gmdate( 'Y-m-d H:i:s', time() - 5 );
		$wpdb->update( $wpdb->posts, array( 'post_date' => $past, 'post_date_gmt' => $past ), array( 'ID' => $id ) );
		clean_post_cache( $id );

		// What wp-cron.php does for the due event, then the next event of the same run begins.
		do_action_ref_array( 'publish_future_post', array( $id ) );
		$this->assertSame( 'publish', get_post_status( $id ) );
		$this->assertContains( $this->key( 'tl-' . self::$ids['sports'] ), $this->sent_tags( true ), 'the category listing it enters, before the run ends' );
		$this->assertContains( $this->key( 'home' ), $this->sent_tags( true ) );
		$this->assertContains( get_permalink( $id ), $this->sent_urls() );

		// The rest of the run's changes still go out at its end.
		Environment::clear_webhooks();
		wp_update_post( array( 'ID' => $id, 'post_title' => 'Cron later, edited' ) );
		$this->assertSame( array(), Environment::webhooks() );
		$this->end_request();
		$this->assertContains( $this->key( "p-$id" ), $this->sent_tags( false ) );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_double_save_is_one_batch_and_noop_save_purges_only_the_post_itself(): void {
		$id = self::$ids['delta'];
		wp_update_post( array( 'ID' => $id, 'post_content' => 'Delta v' . microtime( true ) ) );
		wp_update_post( array( 'ID' => $id, 'post_excerpt' => 'Delta excerpt ' . microtime( true ) ) );
		$this->end_request();
		$this->assertCount( 1, Environment::webhooks() );

		Environment::clear_webhooks();
		// The block editor's second (meta box) save: the diff sees nothing visible. Conservative:
		// the post's own page, REST item and URL are still invalidated (a field the diff does not
		// compare may have changed), feeds (modified time) too, and nothing further.
		wp_update_post( array( 'ID' => $id ) );
		$this->end_request();
		$this->assertLessThanOrEqual( 1, count( Environment::webhooks() ) );
		$this->assertContains( $this->key( "p-$id" ), $this->sent_tags( false ) );
		$this->assertContains( get_permalink( $id ), $this->sent_urls() );
		$sent = array_merge( $this->sent_tags(), $this->sent_urls() );
		// `lastmod` only when the save fell in a later second than the one before (a busy machine):
		// the modified time changed, and empty feeds print it.
		$allowed = array( $this->key( "p-$id" ), $this->key( "r-p-$id" ), $this->key( "pf-$id" ), $this->key( 'r-p-many' ), $this->key( 'pf-many' ), $this->key( 'lastmod' ), get_permalink( $id ) );
		$this->assertSame( array(), array_values( array_diff( $sent, $allowed ) ), 'the post itself and feeds, nothing else' );
	}

	public function test_bulk_edit_of_100_posts_sends_a_bounded_batch(): void {
		$ids = array();
		for ( $i = 0; $i < 100; $i++ ) {
			$ids[] = wp_insert_post( array( 'post_title' => "Bulk $i", 'post_status' => 'publish', 'post_date' => '2024-01-01 00:00:00' ) );
		}
		$this->end_request();
		$this->assertLessThanOrEqual( 2, count( Environment::webhooks() ), 'inserting 100 posts in one request' );
		Environment::clear_webhooks();

		foreach ( $ids as $id ) {
			wp_update_post( array( 'ID' => $id, 'post_content' => 'bulk edited' ) );
		}
		$this->end_request();
		$hooks = Environment::webhooks();
		$this->assertLessThanOrEqual( 2, count( $hooks ) );
		$this->assertLessThanOrEqual( 10, count( $hooks[0]['body']['events'] ) );
		$this->assertContains( $this->key( 'p-' . $ids[99] ), $this->sent_tags( false ) );
		foreach ( $ids as $id ) {
			wp_delete_post( $id, true );
		}
		$this->end_request();
	}

	public function test_category_change_purges_old_and_new_term_listings_only(): void {
		$id = self::$ids['golf'];
		wp_set_post_categories( $id, array( self::$ids['news'] ) );
		$this->end_request();
		$soft = $this->sent_tags( true );
		$this->assertContains( $this->key( 'tl-' . self::$ids['sports'] ), $this->sent_tags( false ), 'the archive it left: hard, it must not show there again' );
		$this->assertContains( $this->key( 'tl-' . self::$ids['news'] ), $soft, 'the archive it entered' );
		$this->assertContains( $this->key( "pt-$id" ), $soft, 'pages showing its terms' );
		$this->assertNotContains( $this->key( "pl-$id" ), $soft );
		$this->assertNotContains( $this->key( 'home' ), $soft );
		wp_set_post_categories( $id, array( self::$ids['sports'] ) );
		$this->end_request();
	}

	public function test_author_change_and_sticky(): void {
		$id = self::$ids['alpha'];
		wp_update_post( array( 'ID' => $id, 'post_author' => self::$ids['alice'] ) );
		$this->end_request();
		$soft = $this->sent_tags( true );
		$this->assertContains( $this->key( 'ul-1' ), $soft );
		$this->assertContains( $this->key( 'ul-' . self::$ids['alice'] ), $soft );
		wp_update_post( array( 'ID' => $id, 'post_author' => 1 ) );
		$this->end_request();

		Environment::clear_webhooks();
		stick_post( $id );
		$this->end_request();
		$this->assertContains( $this->key( 'home' ), $this->sent_tags( true ) );
		unstick_post( $id );
		$this->end_request();
	}

	public function test_comments(): void {
		$post = self::$ids['echo'];
		$cid  = wp_insert_comment( array( 'comment_post_ID' => $post, 'comment_content' => 'Nice', 'comment_approved' => 1 ) );
		$this->end_request();
		$this->assertContains( $this->key( "c-$post" ), $this->sent_tags( true ) );
		$this->assertContains( $this->key( 'comments' ), $this->sent_tags( true ) );

		Environment::clear_webhooks();
		wp_set_comment_status( $cid, 'hold' );
		$this->end_request();
		$this->assertContains( $this->key( "c-$post" ), $this->sent_tags( false ) );

		Environment::clear_webhooks();
		$pending = wp_insert_comment( array( 'comment_post_ID' => $post, 'comment_content' => 'Spam?', 'comment_approved' => 0 ) );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks(), 'a pending comment changes no page' );

		wp_set_comment_status( $cid, 'approve' );
		wp_update_comment( array( 'comment_ID' => $cid, 'comment_content' => 'Edited' ) );
		wp_delete_comment( $cid, true );
		wp_delete_comment( $pending, true );
		$this->end_request();
		$this->assertCount( 1, Environment::webhooks() );
		$this->assertContains( $this->key( "c-$post" ), $this->sent_tags( false ) );
	}

	public function test_term_edit_rename_and_delete(): void {
		$term = wp_insert_term( 'Temporary', 'category', array( 'slug' => 'temporary' ) )['term_id'];
		$this->end_request();
		// Its archive with its pages and feed: a cached 404, an empty feed.
		$this->assertContains( home_url( '/category/temporary/' ), $this->sent_urls( 'prefix' ) );

		Environment::clear_webhooks();
		wp_update_term( $term, 'category', array( 'slug' => 'renamed' ) );
		$this->end_request();
		$this->assertContains( $this->key( "t-$term" ), $this->sent_tags( false ) );
		$this->assertContains( $this->key( "tl-$term" ), $this->sent_tags( false ) );
		$this->assertContains( home_url( '/category/temporary/' ), $this->sent_urls( 'prefix' ) );
		$this->assertContains( home_url( '/category/renamed/' ), $this->sent_urls( 'prefix' ) );

		Environment::clear_webhooks();
		wp_delete_term( $term, 'category' );
		$this->end_request();
		$this->assertContains( $this->key( "t-$term" ), $this->sent_tags( false ) );
		$this->assertContains( home_url( '/category/renamed/' ), $this->sent_urls( 'prefix' ) );
	}

	public function test_menus_widgets_and_site_wide_changes(): void {
		$menu = wp_create_nav_menu( 'Main ' . wp_generate_password( 4, false ) );
		wp_update_nav_menu_item( $menu, 0, array( 'menu-item-title' => 'Home', 'menu-item-url' => home_url( '/' ), 'menu-item-status' => 'publish' ) );
		$this->end_request();
		$this->assertContains( $this->key( 'menus' ), $this->sent_tags( true ) );
		$this->assertFalse( $this->sent_all() );
		wp_delete_nav_menu( $menu );
		$this->end_request();

		Environment::clear_webhooks();
		update_option( 'widget_text', array( 2 => array( 'text' => 'hi ' . microtime( true ) ) ) );
		$this->end_request();
		$this->assertContains( $this->key( 'widgets' ), $this->sent_tags( true ) );

		Environment::clear_webhooks();
		$format = get_option( 'date_format' );
		update_option( 'date_format', 'j F Y' === $format ? 'Y-m-d' : 'j F Y' );
		$this->end_request();
		$this->assertTrue( $this->sent_all() );
		$events = Environment::accepted_events();
		$this->assertCount( 1, $events, 'a whole-site purge replaces everything else' );
		update_option( 'date_format', $format );
		$this->end_request();

		Environment::clear_webhooks();
		do_action( 'customize_save_after', null );
		do_action( 'switch_theme', 'Twenty Twenty-Three', null, null );
		$this->end_request();
		$this->assertTrue( $this->sent_all() );
	}

	public function test_site_name_tagline_icon_and_logo_purge_soft_what_shows_them_and_refresh_the_site(): void {
		$before = array();
		foreach ( array( 'blogname', 'blogdescription', 'site_icon', 'site_logo' ) as $option ) {
			$before[ $option ] = get_option( $option, null );
		}
		$changes = array(
			'option blogname changed'        => static function () {
				update_option( 'blogname', 'Renamed ' . microtime( true ) );
			},
			'option blogdescription changed' => static function () {
				update_option( 'blogdescription', 'Tagline ' . microtime( true ) );
			},
			'option site_icon changed'       => static function () {
				update_option( 'site_icon', self::$ids['about'] );
			},
			'option site_logo '              => static function () {
				update_option( 'site_logo', self::$ids['about'] ); // Added the first time (the editor's site logo block, over REST).
			},
		);
		$keys = array( 'site-name', 'site-tagline', 'site-icon', 'site-logo' );
		foreach ( $changes as $reason => $change ) {
			$key = array_shift( $keys );
			Environment::clear_webhooks();
			$change();
			$this->end_request();
			$this->assertFalse( $this->sent_all(), $reason . ': no whole-site ban' );
			$events = Environment::accepted_events();
			$this->assertSame( array( 'tags' ), array_values( array_unique( array_column( $events, 'kind' ) ) ), $reason );
			$this->assertSame( array( $this->key( $key ) ), $this->sent_tags( true ), $reason );
			$this->assertSame( array(), $this->sent_tags( false ), $reason );
			$this->assertStringContainsString( $reason, implode( ' ', array_column( $events, 'reason' ) ) );
			$refresh = end( $events )['refresh'] ?? array();
			$this->assertSame( home_url( '/' ), $refresh[0] ?? null, $reason . ': home re-fetched first' );
			$this->assertContains( get_permalink( self::$ids['bravo'] ), $refresh, $reason . ': and the newest posts' );
		}
		foreach ( $before as $option => $value ) {
			null === $value ? delete_option( $option ) : update_option( $option, $value );
		}
		$this->end_request();
	}

	public function test_user_profile_change(): void {
		$alice = self::$ids['alice'];
		wp_update_user( array( 'ID' => $alice, 'display_name' => 'Alice A. ' . wp_generate_password( 4, false ) ) );
		$this->end_request();
		$soft = $this->sent_tags( true );
		$this->assertContains( $this->key( "u-$alice" ), $soft );
		$this->assertContains( $this->key( "ul-$alice" ), $soft );

		Environment::clear_webhooks();
		wp_update_user( array( 'ID' => $alice ) );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks(), 'an update that changes nothing public' );
	}

	public function test_attachment_change_purges_embedding_posts(): void {
		$att  = wp_insert_attachment( array( 'post_title' => 'Picture', 'post_mime_type' => 'image/png', 'post_status' => 'inherit', 'guid' => home_url( '/wp-content/uploads/pic.png' ) ), 'pic.png', 0 );
		$post = $this->new_post( array( 'post_content' => '<img class="wp-image-' . $att . '" src="x.png">' ) );
		$thumb = $this->new_post();
		set_post_thumbnail( $thumb, $att );
		$this->end_request();
		Environment::clear_webhooks();

		wp_update_post( array( 'ID' => $att, 'post_title' => 'Picture renamed' ) );
		$this->end_request();
		$hard = $this->sent_tags( false );
		$this->assertContains( $this->key( "p-$att" ), $hard );
		$this->assertContains( $this->key( "e-$att" ), $hard, 'one key for every page that rendered it' );
		$this->assertContains( $this->key( "e-$att" ), Environment::keys_of( Environment::fetch( get_permalink( $post ) ) ), 'the post with its image carries it' );
		$this->assertContains( $this->key( "e-$att" ), Environment::keys_of( Environment::fetch( get_permalink( $thumb ) ) ), 'the post with it as featured image carries it' );
	}

	public function test_events_follow_the_protocol(): void {
		wp_update_post( array( 'ID' => self::$ids['echo'], 'post_title' => 'Echo ' . wp_generate_password( 4, false ) ) );
		$this->end_request();
		foreach ( Environment::accepted_events() as $event ) {
			$this->assertMatchesRegularExpression( '/^[A-Za-z0-9_.:-]{1,128}$/', $event['id'] );
			$this->assertMatchesRegularExpression( '/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/', $event['time'] );
			$this->assertIsBool( $event['soft'] );
			$this->assertNotSame( '', $event['reason'] );
		}
		$this->assertNotEmpty( Environment::accepted_events() );
	}
}
