<?php
use VarnishEdge\Invalidation;
use VarnishEdge\Key_Scheme;
use VarnishEdge\Post_Change_Policy;
use VarnishEdge\Post_Facts;

/**
 * The post rules on their own: snapshots in, invalidation out, the site's answers from a table.
 */
class PostChangePolicyTest extends \PHPUnit\Framework\TestCase {

	private Table_Post_Facts $facts;
	private Post_Change_Policy $policy;

	protected function setUp(): void {
		$this->facts  = new Table_Post_Facts();
		$this->policy = new Post_Change_Policy( new Key_Scheme( 'ns' ), $this->facts );
	}

	/** A published post as a snapshot holds it. */
	private function post( array $fields = array() ): array {
		return array_merge(
			array(
				'id'             => 7,
				'type'           => 'post',
				'status'         => 'publish',
				'name'           => 'hello',
				'title'          => 'Hello world',
				'content'        => md5( 'Some words here' ),
				'excerpt'        => md5( '' ),
				'date'           => '2026-03-04 10:00:00',
				'author'         => 2,
				'parent'         => 0,
				'menu_order'     => 0,
				'terms'          => array( 'category' => array( 1 ) ),
				'sticky'         => false,
				'template'       => '',
				'thumbnail'      => 0,
				'password'       => md5( '' ),
				'comment_status' => 'open',
				'modified'       => '2026-03-04 10:00:00',
				'texts'          => array( 'Hello world', 'Some words here', '' ),
				'url'            => 'http://example.com/hello/',
			),
			$fields
		);
	}

	/** A text edit as the snapshot records it (md5 compared, raw text kept). */
	private function edited( string $content, array $fields = array() ): array {
		return $this->post( array_merge( array( 'content' => md5( $content ), 'texts' => array( 'Hello world', $content, '' ), 'modified' => '2026-03-05 09:00:00' ), $fields ) );
	}

	private function hard( Invalidation $inv ): array {
		return array_keys( $inv->hard_tags );
	}

	private function soft( Invalidation $inv ): array {
		return array_keys( $inv->soft_tags );
	}

	public function test_a_save_the_diff_sees_nothing_in_purges_the_post_itself_only(): void {
		$inv = $this->policy->invalidation( $this->post(), $this->post() );
		$this->assertSame( array( 'ns-p-7', 'ns-r-p-7' ), $this->hard( $inv ) );
		$this->assertSame( array( 'ns-pf-7' ), $this->soft( $inv ) );
		$this->assertSame( array( 'http://example.com/hello/' ), array_keys( $inv->hard_urls ) );
		$this->assertSame( array( 'post 7 saved' ), array_keys( $inv->reasons ) );
	}

	public function test_added_words_spread_soft_and_removed_words_hard(): void {
		$added = $this->policy->invalidation( $this->post(), $this->edited( 'Some words here and more' ) );
		$this->assertContains( 'ns-pl-7', $this->soft( $added ) );
		$this->assertContains( 'ns-search', $this->soft( $added ) );
		$this->assertContains( 'ns-lastmod', $this->soft( $added ) );
		$this->assertNotContains( 'ns-pl-7', $this->hard( $added ) );

		$removed = $this->policy->invalidation( $this->post(), $this->edited( 'Some here' ) );
		$this->assertContains( 'ns-pl-7', $this->hard( $removed ) );
		$this->assertContains( 'ns-pf-7', $this->hard( $removed ) );
		$this->assertContains( 'ns-search', $this->hard( $removed ) );
		$this->assertContains( 'ns-r-q-posts', $this->hard( $removed ) );
		$this->assertContains( 'post 7: content removed', array_keys( $removed->reasons ) );
	}

	public function test_a_password_set_or_a_featured_image_replaced_is_a_removal(): void {
		$before = $this->post( array( 'thumbnail' => 5 ) );
		$this->assertTrue( Post_Change_Policy::is_removal( $before, $this->post( array( 'thumbnail' => 6 ) ), array( 'thumbnail' ) ) );
		$this->assertFalse( Post_Change_Policy::is_removal( $this->post(), $this->post( array( 'thumbnail' => 6 ) ), array( 'thumbnail' ) ) );
		$this->assertTrue( Post_Change_Policy::is_removal( $this->post(), $this->post( array( 'password' => md5( 'secret' ) ) ), array( 'password' ) ) );
	}

	public function test_terms_left_purge_hard_and_terms_entered_soft(): void {
		$inv = $this->policy->invalidation( $this->post(), $this->post( array( 'terms' => array( 'category' => array( 3 ) ) ) ) );
		$this->assertContains( 'ns-tl-1', $this->hard( $inv ) );
		$this->assertContains( 'ns-tl-3', $this->soft( $inv ) );
		$this->assertContains( 'ns-pt-7', $this->soft( $inv ) );
		$this->assertContains( 'ns-r-q-categories', $this->soft( $inv ) );
	}

	public function test_publishing_reaches_every_listing_and_the_neighbours(): void {
		$this->facts->neighbors = array( 6, 8 );
		$inv                    = $this->policy->invalidation( $this->post( array( 'status' => 'draft' ) ), $this->post() );
		$this->assertSame( array( 'ns-p-7', 'ns-r-p-7' ), $this->hard( $inv ) );
		foreach ( array( 'ns-home', 'ns-pta-post', 'ns-tl-1', 'ns-ul-2', 'ns-date-2026', 'ns-date-202603', 'ns-date-20260304', 'ns-search', 'ns-r-c-posts', 'ns-nb-6', 'ns-nb-8', 'ns-lastmod' ) as $key ) {
			$this->assertContains( $key, $this->soft( $inv ), $key );
		}
	}

	public function test_authors_joining_or_leaving_the_users_list_are_decided_from_all_of_a_requests_changes(): void {
		$draft = fn( int $id, int $author ): array => $this->post( array( 'id' => $id, 'author' => $author, 'status' => 'draft' ) );
		$pub   = fn( int $id, int $author ): array => $this->post( array( 'id' => $id, 'author' => $author ) );
		// An import: 500 posts of a new author published in one request (500 now, none before).
		$this->facts->public_posts = array( 3 => 500 );
		$import                    = array_map( fn( int $i ): array => array( null, $pub( $i, 3 ) ), range( 1, 500 ) );
		$inv                       = $this->policy->authors_changed( $import );
		$this->assertSame( array( 'ns-r-c-users' ), $this->soft( $inv ) );
		$this->assertSame( array(), $this->hard( $inv ) );
		// A bulk edit moving 20 posts from author 2 (who keeps 5) to author 3 (who had none).
		$this->facts->public_posts = array( 2 => 5, 3 => 20 );
		$moved                     = array_map( fn( int $i ): array => array( $pub( $i, 2 ), $pub( $i, 3 ) ), range( 1, 20 ) );
		$this->assertSame( array( 'ns-r-c-users' ), $this->soft( $this->policy->authors_changed( $moved ) ) );
		// 100 trashed: author 3 has none left, so the list and their own REST item change (hard).
		$this->facts->public_posts = array( 3 => 0 );
		$trashed                   = array_map( fn( int $i ): array => array( $pub( $i, 3 ), $draft( $i, 3 ) ), range( 1, 100 ) );
		$gone                      = $this->policy->authors_changed( $trashed );
		$this->assertSame( array( 'ns-r-c-users', 'ns-r-u-3' ), $this->hard( $gone ) );
		// Authors who had public posts before and still have: nothing.
		$this->facts->public_posts = array( 2 => 4, 3 => 27 );
		$this->assertSame( array(), array_merge( $this->soft( $this->policy->authors_changed( $moved ) ), $this->hard( $this->policy->authors_changed( $trashed ) ) ) );
	}

	public function test_unpublishing_purges_everything_that_showed_it_hard(): void {
		$this->facts->neighbors = array( 6 );
		$inv                    = $this->policy->invalidation( $this->post(), null );
		foreach ( array( 'ns-p-7', 'ns-pl-7', 'ns-pn-7', 'ns-pf-7', 'ns-pa-7', 'ns-pt-7', 'ns-c-7', 'ns-home', 'ns-tl-1', 'ns-nb-6' ) as $key ) {
			$this->assertContains( $key, $this->hard( $inv ), $key );
		}
		$this->assertSame( array( 'http://example.com/hello/' ), array_keys( $inv->hard_urls ) );
		$this->assertSame( array( 'post 7 deleted' ), array_keys( $inv->reasons ) );
		$this->assertSame( array( 'post 7 trashed' ), array_keys( $this->policy->invalidation( $this->post(), $this->post( array( 'status' => 'trash' ) ) )->reasons ) );
	}

	public function test_a_new_address_purges_the_old_one_and_under_it_for_hierarchical_types(): void {
		$moved = $this->post( array( 'name' => 'moved', 'url' => 'http://example.com/moved/' ) );
		$inv   = $this->policy->invalidation( $this->post(), $moved );
		$this->assertSame( array( 'http://example.com/moved/', 'http://example.com/hello/' ), array_keys( $inv->hard_urls ) );
		$this->assertSame( array(), $inv->prefixes );

		$this->facts->hierarchical = array( 'page' );
		$page                      = $this->policy->invalidation( $this->post( array( 'type' => 'page' ) ), array_merge( $moved, array( 'type' => 'page' ) ) );
		$this->assertSame( array( 'http://example.com/hello/' ), array_keys( $page->prefixes ) );
		$this->assertContains( 'ns-pages', $this->soft( $page ) );
	}

	public function test_nothing_for_posts_never_public_or_types_never_shown(): void {
		$this->assertTrue( $this->policy->invalidation( $this->post( array( 'status' => 'draft' ) ), $this->post( array( 'status' => 'private' ) ) )->is_empty() );
		$this->assertTrue( $this->policy->post_changed( 7, 'revision', null, $this->post( array( 'type' => 'revision' ) ) )->is_empty() );
		$this->facts->viewable = array();
		$this->assertTrue( $this->policy->post_changed( 7, 'post', $this->post(), $this->edited( 'Other' ) )->is_empty(), 'a type without public pages' );
	}

	/** An edit re-fetches the post first, then the front pages, the archives it left and entered, the feed, its neighbours. */
	public function test_an_edit_refreshes_the_post_its_front_pages_archives_feed_and_neighbours_in_that_order(): void {
		$this->facts->neighbors = array( 11, 12 );
		$inv                    = $this->policy->invalidation( $this->post(), $this->edited( 'Other words', array( 'terms' => array( 'category' => array( 3 ), 'post_tag' => array( 4 ) ) ) ) );
		$this->assertSame(
			array( 'http://example.com/hello/', 'http://example.com/', 'http://example.com/blog/', 'http://example.com/category/t1/', 'http://example.com/category/t3/', 'http://example.com/post_tag/t4/', 'http://example.com/feed/', 'http://example.com/p11/', 'http://example.com/p12/' ),
			array_keys( $inv->refresh )
		);
		$this->facts->neighbors = array();
		$this->assertFalse( $inv->refresh_site );

		$moved = $this->policy->invalidation( $this->post(), $this->post( array( 'name' => 'moved', 'url' => 'http://example.com/moved/' ) ) );
		$this->assertSame( 'http://example.com/moved/', array_key_first( $moved->refresh ) );
		$this->assertArrayNotHasKey( 'http://example.com/hello/', $moved->refresh, 'the old address redirects now' );

		$same = $this->policy->invalidation( $this->post(), $this->post() );
		$this->assertSame( array( 'http://example.com/hello/' ), array_keys( $same->refresh ), 'a save that changes nothing shown refreshes the post only' );

		$this->facts->hierarchical = array( 'page' );
		$page                      = $this->policy->invalidation( $this->post( array( 'type' => 'page', 'terms' => array() ) ), $this->edited( 'x', array( 'type' => 'page', 'terms' => array() ) ) );
		$this->assertSame( array( 'http://example.com/hello/', 'http://example.com/', 'http://example.com/blog/' ), array_keys( $page->refresh ), 'pages are not in the feed' );
	}

	public function test_publishing_refreshes_the_new_post_and_unpublishing_never_its_own_url(): void {
		$published = $this->policy->invalidation( $this->post( array( 'status' => 'draft' ) ), $this->post() );
		$this->assertSame( array( 'http://example.com/hello/', 'http://example.com/', 'http://example.com/blog/', 'http://example.com/category/t1/', 'http://example.com/feed/' ), array_keys( $published->refresh ) );

		foreach ( array( 'unpublished' => $this->post( array( 'status' => 'draft' ) ), 'trashed' => $this->post( array( 'status' => 'trash' ) ), 'deleted' => null ) as $what => $after ) {
			$gone = $this->policy->invalidation( $this->post(), $after );
			$this->assertSame( array( 'http://example.com/', 'http://example.com/blog/', 'http://example.com/category/t1/', 'http://example.com/feed/' ), array_keys( $gone->refresh ), $what );
		}
		$this->assertSame( array(), $this->policy->invalidation( $this->post( array( 'status' => 'draft' ) ), $this->post( array( 'status' => 'private' ) ) )->refresh, 'never public' );
	}

	public function test_menu_items_and_navigation_refresh_the_whole_site_s_pages(): void {
		$this->facts->viewable = array();
		foreach ( array( 'nav_menu_item', 'wp_navigation' ) as $type ) {
			$this->assertTrue( $this->policy->post_changed( 9, $type, null, $this->post( array( 'type' => $type ) ) )->refresh_site, $type );
		}
	}

	public function test_menus_templates_and_reusable_blocks_by_type(): void {
		$this->facts->viewable = array();
		$menu                  = $this->policy->post_changed( 9, 'nav_menu_item', null, $this->post( array( 'type' => 'nav_menu_item' ) ) );
		$this->assertSame( array( 'ns-menus' ), $this->soft( $menu ) );
		$this->assertTrue( $this->policy->post_changed( 9, 'wp_template', null, $this->post( array( 'type' => 'wp_template' ) ) )->all );
		$block = $this->policy->post_changed( 9, 'wp_block', $this->post( array( 'type' => 'wp_block' ) ), $this->edited( 'x', array( 'type' => 'wp_block' ) ) );
		$this->assertSame( array( 'ns-e-9', 'ns-r-p-9' ), $this->hard( $block ) );
		$this->assertTrue( $this->policy->post_changed( 9, 'wp_block', $this->post( array( 'type' => 'wp_block' ) ), $this->post( array( 'type' => 'wp_block' ) ) )->is_empty(), 'saved unchanged' );
	}
}

/**
 * The site's answers from a table the test sets.
 */
class Table_Post_Facts implements Post_Facts {

	public array $viewable     = array( 'post', 'page' );
	public array $hierarchical = array();
	public array $listed       = array( 'post' );
	public array $neighbors    = array();
	/** @var array<int,int> author => public posts now */
	public array $public_posts = array();

	public function is_viewable( string $type ): bool {
		return in_array( $type, $this->viewable, true );
	}

	public function is_hierarchical( string $type ): bool {
		return in_array( $type, $this->hierarchical, true );
	}

	public function is_listed( string $type ): bool {
		return in_array( $type, $this->listed, true );
	}

	public function type_base( string $type ): string {
		return 'page' === $type ? 'pages' : 'posts';
	}

	public function taxonomy_base( string $taxonomy ): string {
		return 'category' === $taxonomy ? 'categories' : $taxonomy;
	}

	public function neighbors( array $state ): array {
		return $this->neighbors;
	}

	public function public_post_count( int $author ): int {
		return $this->public_posts[ $author ] ?? 0;
	}

	public function front_urls(): array {
		return array( 'http://example.com/', 'http://example.com/blog/' );
	}

	public function term_url( int $term_id, string $taxonomy ): string {
		return "http://example.com/$taxonomy/t$term_id/";
	}

	public function post_url( int $id ): string {
		return "http://example.com/p$id/";
	}

	public function feed_url(): string {
		return 'http://example.com/feed/';
	}
}
